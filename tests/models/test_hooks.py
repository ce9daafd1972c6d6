"""The value-editing hook: exact identity, real effect, re-extracted edits, removal on error."""

import numpy as np
import pytest
import torch

from geomprobe.extraction import extract
from geomprobe.hooks import edit_values


def _logits(loaded, text):
    enc = loaded.tokenizer(text, return_tensors="pt")
    with torch.no_grad():
        return loaded.model(**enc).logits


def _n_hooks(adapter):
    return sum(len(adapter.value_module(layer)._forward_hooks) for layer in range(adapter.shape.n_layers))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["tiny-neox", "tiny-llama", "tiny-phi", "tiny-gpt2"])
def test_identity_edit_is_bit_exact_and_zero_edit_changes_output(load_tiny, demo_prompts, name):
    loaded = load_tiny(name)
    text = demo_prompts[0].text
    base = _logits(loaded, text)
    with edit_values(loaded.adapter, [0, 2], lambda layer, v: v):
        same = _logits(loaded, text)
    assert torch.equal(base, same)
    with edit_values(loaded.adapter, [1], lambda layer, v: torch.zeros_like(v)):
        edited = _logits(loaded, text)
    assert (edited - base).abs().max() > 1e-3
    assert _n_hooks(loaded.adapter) == 0


@pytest.mark.slow
@pytest.mark.parametrize("name", ["tiny-neox", "tiny-mistral", "tiny-gpt2"])
def test_edited_values_are_what_extraction_sees(load_tiny, varied_prompts, name):
    """Only the value part changes (NeoX's and GPT-2's fused q/k stay intact) and extraction sees the edit."""
    loaded = load_tiny(name)
    before = extract(loaded, varied_prompts, progress=False)
    with edit_values(loaded.adapter, [2], lambda layer, v: v * 0 + 0.25):
        after = extract(loaded, varied_prompts, progress=False)
    assert np.allclose(after["values"][:, 2], 0.25)
    np.testing.assert_array_equal(after["values"][:, :2], before["values"][:, :2])
    # queries and keys of the edited layer are untouched, so its attention pattern is unchanged
    np.testing.assert_allclose(after["attn_entropy_bits"][:, 2], before["attn_entropy_bits"][:, 2], atol=1e-6)
    assert not np.allclose(after["attn_entropy_bits"][:, 3], before["attn_entropy_bits"][:, 3], atol=1e-4)


def test_hooks_removed_when_the_forward_fails(load_tiny, demo_prompts):
    loaded = load_tiny("tiny-llama")

    def explode(layer, v):
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        with edit_values(loaded.adapter, [0, 1, 3], explode):
            _logits(loaded, demo_prompts[0].text)
    assert _n_hooks(loaded.adapter) == 0
    with pytest.raises(ValueError, match="returned shape"):
        with edit_values(loaded.adapter, [0], lambda layer, v: v[..., :1]):
            _logits(loaded, demo_prompts[0].text)
    assert _n_hooks(loaded.adapter) == 0
