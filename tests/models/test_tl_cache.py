"""geomprobe.run_with_cache against TransformerLens 4's own run_with_cache on the same weights.

TransformerLens 4 has no HookedTransformer for these models: a TransformerBridge is booted on a
second, eager-attention copy of each tiny model (the bridge rewires the model it wraps), with
every norm's scale and bias made non-trivial in both copies alike (random init leaves them 1 and
0, which would hide a scale applied twice or not at all). Both run the same right-padded batch;
every name geomprobe accepts in TransformerLens's spelling is compared, at the real positions, to
float32 precision (atol = rtol = 1e-4, measured differences about 1e-5: eager against SDPA
attention). What the bridge (TransformerLens 4.3) does not cache, stated and checked:

- attn.hook_rot_q / hook_rot_k: the bridge fires them only where it applies rotary itself, not on
  GPT-NeoX (rotary inside its fused attention) nor GPT-2 (no rotary); geomprobe gives them on
  every family (GPT-2: the q and k attention reads).
- hook_resid_mid and ln2.*: no residual lies between attention and the MLP of a parallel block
  (GPT-NeoX, Phi), and Phi has no second norm: neither side has them.

Conventions that match: hook_q and hook_k are before rotary (and before Qwen3's and Gemma 3's
per-head norms), hook_rot_q after both; ln*.hook_normalized is before the norm's scale and bias,
ln*.hook_out after; hook_embed is the embedding module's output (Gemma 3: scaled); no LayerNorm
folding on either side (the bridge does not fold unless asked).
"""

import pytest
import torch
from conftest import CAUSAL_TINY

from geomprobe import run_with_cache
from geomprobe.extraction import _pad_id, pad_batch
from geomprobe.hooks import TABLE, missing_point, point_names
from geomprobe.models import load_model

pytestmark = pytest.mark.usefixtures("one_thread")

# short enough for tiny-gemma3's 8-token window: TransformerLens 4.3 windows its global layer too
TEXTS = ["The cat is here.", "It is the end", "A dog"]
TOLERANCE = dict(atol=1e-4, rtol=1e-4)


def _perturb_norms(model, seed: int = 0) -> None:
    """Every norm's scale (and bias) moved off 1 (and 0), the same way in every copy of a model."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, module in sorted(model.named_modules()):
            if "norm" not in type(module).__name__.lower():
                continue
            for tensor in (getattr(module, "weight", None), getattr(module, "bias", None)):
                if isinstance(tensor, torch.Tensor):
                    tensor.add_(0.2 * torch.randn(tensor.shape, generator=generator))


@pytest.fixture(scope="module")
def pair(geomprobe_cache):
    """name -> (geomprobe's LoadedModel, a TransformerBridge over an eager copy), norms perturbed."""
    pytest.importorskip("transformer_lens")
    from transformer_lens.model_bridge import TransformerBridge

    built = {}

    def get(name):
        if name not in built:
            loaded = load_model(name, device="cpu")
            copy = load_model(name, device="cpu", attn_implementation="eager")
            _perturb_norms(loaded.model)
            _perturb_norms(copy.model)
            bridge = TransformerBridge.boot_transformers(str(loaded.source), hf_model=copy.model,
                                                         tokenizer=copy.tokenizer)
            built[name] = loaded, bridge.eval()
        return built[name]

    return get


def _tl_names(adapter) -> list[str]:
    """Every name geomprobe accepts in TransformerLens's spelling, on this model."""
    tl = {point.tl for point in TABLE}
    return [name for name in point_names(adapter) if name.split(".", 2)[-1] in tl or name in tl]


def _bridge_batch(loaded):
    encoded = [loaded.tokenizer(text)["input_ids"] for text in TEXTS]
    return pad_batch(encoded, _pad_id(loaded.tokenizer))


def _masked(tensor, real, name):
    """TransformerLens's tensor with padding positions 0, as geomprobe's cache holds them."""
    tensor = tensor.detach().float()
    if name.endswith("hook_pattern"):  # [batch, heads, q_pos, k_pos]: padding queries
        return tensor.masked_fill(~real[:, None, :, None], 0)
    return tensor.masked_fill(~real.view(*real.shape, *([1] * (tensor.dim() - 2))), 0)


@pytest.mark.slow
@pytest.mark.parametrize("name", CAUSAL_TINY)
def test_every_point_matches_transformer_lens(pair, name):
    loaded, bridge = pair(name)
    names = _tl_names(loaded.adapter)
    input_ids, attention_mask, _ = _bridge_batch(loaded)
    with torch.no_grad():
        tl_logits, tl_cache = bridge.run_with_cache(input_ids, attention_mask=attention_mask)
    logits, cache = run_with_cache(loaded, TEXTS, names=names)
    real = attention_mask.bool()
    assert torch.equal(cache.tokens, input_ids) and list(cache.keys()) == names
    torch.testing.assert_close(logits, _masked(tl_logits, real, "logits"), **TOLERANCE)
    absent = sorted({key.split(".", 2)[-1] for key in names if key not in tl_cache})
    rotary_in_bridge = loaded.adapter.family not in ("gpt_neox", "gpt2")
    assert absent == ([] if rotary_in_bridge else ["attn.hook_rot_k", "attn.hook_rot_q"]), absent
    for key in names:
        if key in tl_cache:
            torch.testing.assert_close(cache[key], _masked(tl_cache[key], real, key), **TOLERANCE, msg=key)
    # the norms are not trivial: their outputs differ from their normalised inputs
    assert not torch.allclose(cache["blocks.1.ln1.hook_out"], cache["blocks.1.ln1.hook_normalized"], atol=1e-2)
    # a point geomprobe refuses on this model is not in the bridge's cache either
    for point in TABLE:
        if missing_point(loaded.adapter, point.name) is not None:
            assert f"blocks.0.{point.tl}" not in tl_cache, point.name


@pytest.mark.slow
@pytest.mark.parametrize("name", ["tiny-neox", "tiny-llama"])
def test_final_tokens_and_names_filters_match_transformer_lens(pair, name):
    """final_token_only keeps TransformerLens's tensors at each prompt's last real token, and a
    names filter selects the same names from both."""
    loaded, bridge = pair(name)
    input_ids, attention_mask, final_index = _bridge_batch(loaded)

    def wanted(key):
        return key.endswith(("hook_pattern", "hook_resid_post", "attn.hook_z")) or key == "ln_final.hook_normalized"

    with torch.no_grad():
        tl_logits, tl_cache = bridge.run_with_cache(input_ids, attention_mask=attention_mask, names_filter=wanted)
    logits, cache = run_with_cache(loaded, TEXTS, names=wanted, final_token_only=True)
    assert set(cache.keys()) == set(tl_cache.keys())
    rows = torch.arange(len(TEXTS))
    torch.testing.assert_close(logits, tl_logits[rows, final_index], **TOLERANCE)
    for key in cache:
        expected = tl_cache[key].float()
        expected = expected[rows, :, final_index] if key.endswith("hook_pattern") else expected[rows, final_index]
        torch.testing.assert_close(cache[key], expected, **TOLERANCE, msg=key)
