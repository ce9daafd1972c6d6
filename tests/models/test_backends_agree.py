"""The hf and tl extraction backends are independent implementations (geomprobe's hooks and
attention function vs TransformerLens 4's TransformerBridge); on every built-in causal family
they must record the same arrays (METHODS.md section 1) to float32 precision.

The two backends batch differently (4 vs 3 prompts), so each prompt meets different padding in
each: agreement also shows that results do not depend on the batch.
"""

import numpy as np
import pytest
import torch

from geomprobe.errors import ConfigError
from geomprobe.extraction import ExtractionConfig, extract
from geomprobe.models import load_model
from geomprobe.models.builtin import demo_prompts_path
from geomprobe.prompts import Prompt, read_prompts

CAUSAL_BUILTINS = ["tiny-neox", "tiny-llama", "tiny-mistral", "tiny-mixtral", "tiny-phi", "tiny-gemma3", "tiny-gpt2"]
TOKENS = [" the", " is", "."]  # single tokens of the built-in tokenizer
READOUTS = ("values", "z", "resid", "hidden")
FLOAT_ARRAYS = ["values", "z", "resid", "hidden", "attn_entropy_bits", "next_entropy_bits"]
SHORT_TEXTS = ["The cat is here.", "It is the end.", "A dog", "The sea is", "So it is."]  # within tiny-gemma3's window


@pytest.fixture(scope="session", autouse=True)
def builtin_cache(tmp_path_factory):
    """Built-in models are built into a temporary cache, never into ~/.cache."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GEOMPROBE_CACHE", str(tmp_path_factory.mktemp("geomprobe-cache")))
        yield


@pytest.fixture(scope="module")
def prompts():
    """Eight demo prompts spread from the shortest to the longest (about 20 to 350 tokens)."""
    by_length = sorted(read_prompts(demo_prompts_path()), key=lambda p: len(p.text))
    return [by_length[i] for i in np.linspace(0, len(by_length) - 1, 8).astype(int)]


@pytest.mark.slow
@pytest.mark.parametrize("name", CAUSAL_BUILTINS)
def test_hf_and_tl_backends_agree(name, prompts):
    loaded = load_model(name)
    kinds = loaded.adapter.attention_kinds()
    if len(set(kinds)) > 1:  # sliding and global layers (Gemma 3): TransformerLens windows both
        with pytest.raises(ConfigError, match="sliding window"):
            extract(loaded, prompts[:2], ExtractionConfig(backend="tl"), progress=False)
        window = loaded.adapter.shape.sliding_window
        prompts = [Prompt(f"short-{i}", text) for i, text in enumerate(SHORT_TEXTS)]
        assert max(len(loaded.tokenizer(p.text)["input_ids"]) for p in prompts) <= window
    for token in TOKENS:
        assert len(loaded.tokenizer.encode(token, add_special_tokens=False)) == 1, token
    hf = extract(loaded, prompts, ExtractionConfig(backend="hf", readouts=READOUTS, tokens=TOKENS, batch_size=4),
                 progress=False)
    tl = extract(loaded, prompts, ExtractionConfig(backend="tl", readouts=READOUTS, tokens=TOKENS, batch_size=3),
                 progress=False)

    assert sorted(tl.arrays) == sorted(hf.arrays)
    for key, expected in hf.arrays.items():
        assert (tl[key].shape, tl[key].dtype) == (expected.shape, expected.dtype), key
    shape = loaded.adapter.shape
    assert hf["values"].shape == (len(prompts), shape.n_layers, shape.n_kv_heads, shape.d_head)

    np.testing.assert_array_equal(tl["n_visible_keys"], hf["n_visible_keys"])
    windows = np.array([shape.sliding_window if kind == "sliding" else np.inf for kind in kinds])
    expected_visible = np.minimum(hf["n_tokens"][:, None], windows[None, :])
    np.testing.assert_array_equal(tl["n_visible_keys"], expected_visible)

    for key in FLOAT_ARRAYS:
        np.testing.assert_allclose(tl[key], hf[key], atol=1e-4, rtol=1e-4, err_msg=f"{name} {key}")
    # probabilities of named tokens are ~1/vocab: compare them relatively
    np.testing.assert_allclose(tl["token_probs"], hf["token_probs"], atol=1e-8, rtol=1e-4,
                               err_msg=f"{name} token_probs")
    assert loaded.model.config._attn_implementation == loaded.attn_implementation  # its own copy


@pytest.mark.slow
@pytest.mark.parametrize("name", CAUSAL_BUILTINS)
def test_backends_agree_on_hidden_after_a_non_trivial_final_norm(name, prompts, tmp_path):
    """The built-ins' final norm is weight 1, bias 0: save a copy with a random scale and bias, so
    "hidden" at the last layer must include the norm's affine part in both backends (TransformerLens'
    ln_final.hook_normalized would not)."""
    loaded = load_model(name)
    norm = loaded.adapter.final_norm()
    generator = torch.Generator().manual_seed(1)
    with torch.no_grad():
        norm.weight.copy_(1 + 0.5 * torch.randn(norm.weight.shape, generator=generator))
        if getattr(norm, "bias", None) is not None:
            norm.bias.copy_(0.3 * torch.randn(norm.bias.shape, generator=generator))
    loaded.model.save_pretrained(tmp_path)
    loaded.tokenizer.save_pretrained(tmp_path)
    edited = load_model(str(tmp_path))
    if len(set(edited.adapter.attention_kinds())) > 1:  # Gemma 3: TransformerLens windows the global layers too
        prompts = [Prompt(f"short-{i}", text) for i, text in enumerate(SHORT_TEXTS)]
    config = dict(readouts=("hidden", "resid"), layers=[0, edited.adapter.shape.n_layers - 1])
    hf = extract(edited, prompts[:4], ExtractionConfig(backend="hf", batch_size=4, **config), progress=False)
    tl = extract(edited, prompts[:4], ExtractionConfig(backend="tl", batch_size=3, **config), progress=False)
    for key in ("hidden", "resid"):
        np.testing.assert_allclose(tl[key], hf[key], atol=1e-4, rtol=1e-4, err_msg=f"{name} {key}")
    assert np.abs(hf["hidden"][:, -1] - hf["resid"][:, -1]).max() > 0.1


def test_tl_backend_refuses_encoders(prompts):
    loaded = load_model("tiny-bert")
    with pytest.raises(ConfigError, match="causal language models only"):
        extract(loaded, prompts[:2], ExtractionConfig(backend="tl"), progress=False)
