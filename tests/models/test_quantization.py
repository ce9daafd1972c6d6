"""bitsandbytes 8-bit / 4-bit (nf4) loading on CPU (METHODS.md section 1 item 4, section 3).

Quantised built-in tiny models are compared against the float model loaded from the same
directory: dequantised W_K must be close to the float W_K (but not identical: the layers must
really be quantised), and extraction must run and stay close to the float extraction.

Measured with bitsandbytes 0.50.2 on the tiny models (hidden size 128, Gaussian init std 0.1),
relative Frobenius error of each layer's W_K against the float model:
    8-bit (LLM.int8 row-wise absmax):  0.63% - 0.68%
    4-bit (nf4, blocksize 64):         9.1% - 9.4% (tiny-gpt2: 9.07% - 9.22%)
Hidden size 128 is enough: 4-bit needs no divisibility by the blocksize (the last block may be
partial), and bitsandbytes' AVX512-BF16 CPU repacking needs out_features % 32 == 0 and
in_features % 64 == 0, which every built-in satisfies.
"""

import copy
import os

import numpy as np
import pytest
import torch

bnb = pytest.importorskip("bitsandbytes")

os.environ.setdefault("HF_HUB_OFFLINE", "1")

pytestmark = [pytest.mark.filterwarnings("ignore:MatMul8bitLt"),
              pytest.mark.filterwarnings("ignore::UserWarning:bitsandbytes")]

MODELS = ["tiny-llama", "tiny-neox", "tiny-phi", "tiny-gpt2"]
# (lower, upper) bounds on the relative Frobenius error of W_K, from the measurements above
# with margin. The lower bound catches a layer that silently stayed in float.
WK_ERROR = {"8bit": (0.002, 0.015), "4bit": (0.05, 0.13)}
# Upper bounds on the relative error of extracted arrays against the float model (measured on
# the eight prompts below: values 8-bit 2.0-3.8%, 4-bit 17-37%; attention entropy 8-bit
# 0.2-0.6%, 4-bit 2.1-5.4%; tiny-gpt2's 2.2%, 20%, 0.28%, 2.0%).
VALUES_ERROR = {"8bit": 0.10, "4bit": 0.60}
ENTROPY_ERROR = {"8bit": 0.02, "4bit": 0.15}
LINEAR_CLASS = {"8bit": "Linear8bitLt", "4bit": "Linear4bit"}


@pytest.fixture(scope="session")
def quant_cache(request, tmp_path_factory):
    """A temporary GEOMPROBE_CACHE for the session (the conftest's, when it provides one)."""
    try:
        yield request.getfixturevalue("geomprobe_cache")
        return
    except pytest.FixtureLookupError:
        pass
    path = tmp_path_factory.mktemp("geomprobe-quant-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GEOMPROBE_CACHE", str(path))
        yield path


_LOADED: dict = {}


@pytest.fixture(scope="session")
def load(quant_cache):
    from geomprobe.models.loading import load_model

    def get(name, quantize=None):
        key = (name, quantize, os.environ.get("GEOMPROBE_CACHE"))
        if key not in _LOADED:
            _LOADED[key] = load_model(name, quantize=quantize, device="cpu")
        return _LOADED[key]

    return get


@pytest.fixture(scope="session")
def prompts():
    from geomprobe.models.builtin import demo_prompts_path
    from geomprobe.prompts import read_prompts

    ordered = sorted(read_prompts(demo_prompts_path()), key=lambda p: len(p.text))
    step = (len(ordered) - 1) / 7
    return [ordered[round(i * step)] for i in range(8)]


def _rel(a, b) -> float:
    a, b = torch.as_tensor(a, dtype=torch.float64), torch.as_tensor(b, dtype=torch.float64)
    return float((a - b).norm() / b.norm())


def _check_key_weights(quant, ref, quantize):
    lo, hi = WK_ERROR[quantize]
    s = ref.adapter.shape
    for layer in range(s.n_layers):
        w_ref, b_ref = ref.adapter.key_weights(layer)
        w, b = quant.adapter.key_weights(layer)
        assert w.dtype == torch.float32 and w.shape == (s.n_kv_heads, s.d_model, s.d_head)
        assert torch.isfinite(w).all()
        err = _rel(w, w_ref)
        assert lo < err < hi, f"layer {layer}: W_K relative error {err:.4f} outside ({lo}, {hi})"
        if b_ref is None:
            assert b is None
        else:  # biases are not quantised
            torch.testing.assert_close(b, b_ref, rtol=1e-3, atol=1e-3)


@pytest.mark.slow
@pytest.mark.parametrize("quantize", ["8bit", "4bit"])
@pytest.mark.parametrize("name", MODELS)
def test_key_weights_dequantised(load, name, quantize):
    ref, quant = load(name), load(name, quantize)
    assert quant.quantize == quantize
    key_module = quant.adapter.key_module(0)
    assert type(key_module).__name__ == LINEAR_CLASS[quantize]
    assert type(ref.adapter.key_module(0)).__name__ == ("Conv1D" if name == "tiny-gpt2" else "Linear")
    _check_key_weights(quant, ref, quantize)


@pytest.mark.slow
@pytest.mark.parametrize("quantize", ["8bit", "4bit"])
@pytest.mark.parametrize("name", MODELS)
def test_extract_runs_and_stays_close(load, prompts, name, quantize):
    from geomprobe.extraction import extract

    ref, quant = load(name), load(name, quantize)
    before = [quant.adapter.key_weights(layer)[0] for layer in range(quant.adapter.shape.n_layers)]
    ex, ex_ref = extract(quant, prompts, progress=False), extract(ref, prompts, progress=False)
    assert set(ex.arrays) == set(ex_ref.arrays)
    for key, array in ex.arrays.items():
        assert array.shape == ex_ref[key].shape, key
        if array.dtype.kind == "f":
            assert np.isfinite(array).all(), key
    assert (ex["n_tokens"] == ex_ref["n_tokens"]).all()
    assert _rel(ex["values"], ex_ref["values"]) < VALUES_ERROR[quantize]
    assert _rel(ex["attn_entropy_bits"], ex_ref["attn_entropy_bits"]) < ENTROPY_ERROR[quantize]
    # A forward pass moves bitsandbytes' state around (8-bit: CB/SCB from the weight to the
    # module's state; 4-bit on AVX512-BF16 CPUs: repacking for the CPU kernel): W_K must not move.
    for layer, w in enumerate(before):
        torch.testing.assert_close(quant.adapter.key_weights(layer)[0], w, rtol=0, atol=2e-2 * w.abs().max().item())
    _check_key_weights(quant, ref, quantize)


@pytest.mark.slow
def test_neox_fused_qkv_heads_8bit(load):
    """The 8-bit fused query_key_value is split into per-head W_K exactly like the float one:
    each head's dequantised W_K is close to the float W_K of the same head and of no other
    head or slice (query/value), and reproduces the keys the quantised module itself computes,
    cut the way GPTNeoXAttention cuts them."""
    ref, quant = load("tiny-neox"), load("tiny-neox", "8bit")
    s = ref.adapter.shape
    H, d, D = s.n_heads, s.d_head, s.d_model
    x = torch.randn(5, D, generator=torch.Generator().manual_seed(0))
    for layer in range(s.n_layers):
        w_ref, b_ref = ref.adapter.key_weights(layer)
        w, b = quant.adapter.key_weights(layer)
        assert w.shape == (H, D, d)
        # every float slice (head, q/k/v) of the fused weight, as D x d
        float_fused = ref.adapter.key_module(layer).weight.detach().float()
        slices = float_fused.view(H, 3, d, D).transpose(-1, -2).reshape(H * 3, D, d)
        for h in range(H):
            assert _rel(w[h], w_ref[h]) < WK_ERROR["8bit"][1], f"layer {layer} head {h}"
            distances = (slices - w[h]).flatten(1).norm(dim=1)
            assert int(distances.argmin()) == 3 * h + 1, f"layer {layer} head {h} matches another slice"
        # keys as the quantised module computes them (HF GPTNeoX: view(..., H, 3d).chunk(3))
        with torch.no_grad():
            out = quant.adapter.key_module(layer)(x.to(torch.float32)).float()
        keys_module = out.view(5, H, 3 * d).chunk(3, dim=-1)[1]  # [5, H, d]
        keys_dequant = torch.einsum("nD,hDd->nhd", x, w) + b
        assert _rel(keys_dequant, keys_module) < 0.03, f"layer {layer}"


@pytest.mark.parametrize("double_quant", [False, True])
def test_cpu_packed_4bit_layout(load, double_quant):
    """On CPUs with AVX512-BF16, bitsandbytes repacks a Linear4bit in place on its first eval
    forward (quant_state.packing_format_for_cpu), a layout dequantize_4bit cannot read. This
    machine may not do it itself, so quantise a float W_K and apply that repacking to a copy."""
    from bitsandbytes import functional as bnbf

    from geomprobe.adapters.base import dequantized_weight

    convert = getattr(bnbf, "_convert_weight_packed_for_cpu", None)
    if convert is None:
        pytest.skip("this bitsandbytes has no CPU repacking")
    float_weight = load("tiny-phi").adapter.key_module(1).weight.detach().float().clone()
    n_out, n_in = float_weight.shape
    module = bnb.nn.Linear4bit(n_in, n_out, bias=False, compress_statistics=double_quant, quant_type="nf4")
    module.weight = bnb.nn.Params4bit(float_weight.clone(), requires_grad=False, compress_statistics=double_quant,
                                      quant_type="nf4", module=module)
    module = module.to("cpu").eval()  # quantises; no forward, so not repacked
    state = module.weight.quant_state
    assert not getattr(state, "packing_format_for_cpu", False) and state.nested == double_quant
    expected = bnbf.dequantize_4bit(module.weight.data, state).float()
    torch.testing.assert_close(dequantized_weight(module), expected)
    assert _rel(expected, float_weight) < WK_ERROR["4bit"][1]

    packed = copy.deepcopy(module)
    data, packed_state = convert(module.weight.data.clone(), copy.deepcopy(state))
    packed.weight.data, packed.weight.quant_state = data, packed_state
    assert packed.weight.quant_state.packing_format_for_cpu
    got = dequantized_weight(packed)
    assert got.shape == expected.shape
    assert _rel(got, expected) < 0.01  # the packed layout keeps absmax in bfloat16 (measured 0.16%)
    assert _rel(bnbf.dequantize_4bit(data, packed_state).float(), expected) > 0.5  # the naive read is wrong
