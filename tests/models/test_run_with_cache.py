"""geomprobe.run_with_cache and its ActivationCache: what a model spec, a LoadedModel and a model
object give; names as a list, a filter or everything; every point's shape on every family;
final-token slices; results independent of the batching, with zeros at padding; lookups by any
spelling; the memory plan (exact cache bytes, a one-line refusal). Against TransformerLens's own
cache: test_tl_cache.py."""

import sys

import numpy as np
import pytest
import torch
from conftest import ALL_TINY

import geomprobe
from geomprobe import activation_cache, hooks, run_with_cache
from geomprobe.errors import ConfigError
from geomprobe.hooks import POINT_OF, edit, point_names

pytestmark = pytest.mark.usefixtures("one_thread")

TEXTS = ["The cat sat on the mat and looked at the door.", "Short one.", "A third prompt"]


@pytest.mark.parametrize("name", ALL_TINY)
def test_every_point_has_its_documented_shape(load_tiny, name):
    loaded = load_tiny(name)
    logits, cache = run_with_cache(loaded, TEXTS)
    n_tokens = [len(loaded.tokenizer(text)["input_ids"]) for text in TEXTS]
    assert cache.n_tokens.tolist() == n_tokens
    width = max(n_tokens)
    sizes = {"batch": len(TEXTS), "pos": width, "q_pos": width, "k_pos": width}
    shapes = point_names(loaded.adapter)
    every_point = {hooks.resolve_name(key, loaded.adapter.shape.n_layers) for key in shapes}
    assert len(cache) == len(every_point) and all(key.split(".")[-1] in POINT_OF for key in cache)  # geomprobe's names
    for key in cache:
        assert tuple(cache[key].shape) == tuple(sizes.get(dim, dim) for dim in shapes[key]), key
        assert cache[key].device.type == "cpu" and not cache[key].requires_grad
    if loaded.adapter.unembed() is None:
        assert logits is None  # an encoder
    else:
        assert logits.shape == (len(TEXTS), width, loaded.model.config.vocab_size)


def test_a_spec_a_model_object_and_a_loaded_model_give_the_same_cache(load_tiny):
    loaded = load_tiny("tiny-neox")
    names = ["blocks.1.attn.hook_pattern", "blocks.2.hook_resid_post", "hook_embed"]
    logits, cache = run_with_cache(loaded, TEXTS, names)
    by_spec = run_with_cache("tiny-neox", TEXTS, names, device="cpu")
    import transformers

    model = transformers.AutoModelForCausalLM.from_pretrained(loaded.source)
    by_object = run_with_cache(model, TEXTS, names, tokenizer=loaded.tokenizer)
    assert model.config._attn_implementation == "sdpa"  # borrowed and put back
    for other_logits, other in (by_spec, by_object):
        assert list(other.keys()) == names
        torch.testing.assert_close(other_logits, logits)
        for key in names:
            torch.testing.assert_close(other[key], cache[key], atol=1e-6, rtol=1e-6)
    with pytest.raises(ConfigError, match="tokenizer= goes with a model object"):
        run_with_cache("tiny-neox", TEXTS, names, tokenizer=loaded.tokenizer)


def test_names_any_spelling_filters_and_lookups(load_tiny):
    loaded = load_tiny("tiny-llama")
    _, cache = run_with_cache(loaded, "The cat sat", ["blocks.1.v", (2, "hook_resid_post"), "ln_final"])
    assert list(cache.keys()) == ["blocks.1.v", (2, "hook_resid_post"), "ln_final"]
    # any spelling of a cached point finds it; others are a one-line KeyError
    assert cache["blocks.1.attn.hook_v"] is cache["blocks.1.v"] is cache[(1, "values")]
    assert cache["blocks.-2.resid"] is cache[(2, "hook_resid_post")]
    assert "blocks.1.values" in cache and "blocks.1.z" not in cache and 3 not in cache
    with pytest.raises(KeyError, match=r"'blocks.1.z' is not in this cache \(3 names: blocks.1.v, .*names=\[...\]"):
        cache["blocks.1.z"]
    # a filter sees every accepted spelling, as TransformerLens's names_filter sees its names
    _, filtered = run_with_cache(loaded, "The cat sat", lambda key: key.endswith(("hook_z", ".pattern")))
    n_layers = loaded.adapter.shape.n_layers
    assert list(filtered) == [f"blocks.{layer}.{name}" for layer in range(n_layers)
                              for name in ("pattern", "attn.hook_z")]
    assert filtered.stack("pattern").shape[0] == n_layers == filtered.stack("attn.hook_pattern").shape[0]
    with pytest.raises(ConfigError, match="names filter selected no hook point"):
        run_with_cache(loaded, "The cat sat", lambda key: False)
    with pytest.raises(ConfigError, match="unknown hook point 'blocks.1.hook_q': did you mean blocks.1.attn.hook_q"):
        run_with_cache(loaded, "The cat sat", ["blocks.1.hook_q"])
    with pytest.raises(ConfigError, match="no prompts"):
        run_with_cache(loaded, [], ["blocks.1.z"])


def test_final_tokens_batches_and_padding(load_tiny):
    """final_token_only keeps the full cache's slices at each prompt's last token; the cache and
    logits do not depend on the batching; positions past a prompt's tokens are 0."""
    loaded = load_tiny("tiny-mistral")  # a sliding window of 8: padding queries past it see no key
    names = ["blocks.0.resid_pre", "blocks.1.pattern", "blocks.2.ln2.hook_normalized", "blocks.3.k"]
    logits, full = run_with_cache(loaded, TEXTS, names)
    one_logits, one = run_with_cache(loaded, TEXTS, names, batch_size=1)
    final_logits, final = run_with_cache(loaded, TEXTS, names, final_token_only=True)
    rows, last = torch.arange(len(TEXTS)), full.n_tokens - 1
    torch.testing.assert_close(one_logits, logits, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(final_logits, logits[rows, last], atol=1e-5, rtol=1e-5)
    for key in names:
        torch.testing.assert_close(one[key], full[key], atol=1e-5, rtol=1e-5)
        axis = POINT_OF[key.split(".")[-1].removeprefix("hook_")].pos_axis if "pattern" in key else 1
        torch.testing.assert_close(final[key], full[key].movedim(axis, 1)[rows, last], atol=1e-5, rtol=1e-5)
    short = int(full.n_tokens[1])
    assert torch.all(full["blocks.0.resid_pre"][1, short:] == 0) and torch.all(logits[1, short:] == 0)
    pattern = full["blocks.1.pattern"]
    assert torch.all(pattern[1, :, short:] == 0) and torch.all(pattern[1, :, :, short:] == 0)
    assert torch.all(full["blocks.0.resid_pre"][1, :short] != 0)
    assert torch.equal(full.tokens[1, :short], torch.tensor(loaded.tokenizer(TEXTS[1])["input_ids"]))
    assert final.final_token_only and not full.final_token_only


def test_an_edit_around_the_call_is_in_the_cache(load_tiny):
    loaded = load_tiny("tiny-gpt2")
    with edit(loaded.adapter, {"blocks.1.attn.hook_q": lambda q: q * 0}):
        logits, cache = run_with_cache(loaded, TEXTS, ["blocks.1.q", "blocks.1.pattern"])
    assert torch.all(cache["blocks.1.q"] == 0)
    pattern = cache["blocks.1.pattern"][0]  # equal scores: uniform over the keys each query sees
    causal = torch.tril(torch.ones_like(pattern[0]))
    torch.testing.assert_close(pattern, (causal / causal.sum(-1, keepdim=True)).expand_as(pattern))


def test_the_cache_as_numpy_and_in_a_few_lines(load_tiny):
    loaded = load_tiny("tiny-llama", dtype="bfloat16")
    logits, cache = run_with_cache(loaded, TEXTS, ["blocks.0.z", "blocks.0.pattern"])
    assert cache["blocks.0.z"].dtype == torch.bfloat16 and cache["blocks.0.pattern"].dtype == torch.float32
    arrays = cache.to_numpy()
    assert arrays["blocks.0.z"].dtype == np.float32 and arrays["blocks.0.z"].shape == tuple(cache["blocks.0.z"].shape)
    text = repr(cache)
    assert text.startswith("ActivationCache: 3 prompts (at most ") and "blocks.0.z" in text and "bfloat16" in text
    assert logits.dtype == torch.bfloat16


def test_the_memory_plan_is_exact_and_refuses_what_does_not_fit(load_tiny, monkeypatch):
    loaded = load_tiny("tiny-llama")
    names = ["blocks.0.resid_pre", "blocks.1.pattern", "blocks.2.ln1_normalized", "embed"]
    logits, cache = run_with_cache(loaded, TEXTS, names)
    points = [(0, "resid_pre"), (1, "pattern"), (2, "ln1_normalized"), (None, "embed")]
    plan = activation_cache.plan_cache(loaded, points, cache.n_tokens.numpy(), final_token_only=False)
    assert plan.cache_bytes == cache.nbytes + logits.numel() * logits.element_size()
    assert plan.batch_size == 3 and "cache" in plan.describe()
    monkeypatch.setattr(activation_cache, "host_memory_available", lambda: 2**20)
    with pytest.raises(ConfigError, match=r"the cache would hold .* but 1.0 MiB of RAM is available: ask for fewer "
                                          "names, final_token_only=True") as error:
        run_with_cache(loaded, TEXTS, names)
    assert "\n" not in str(error.value)
    tight = activation_cache.plan_cache(loaded, points, np.array([400] * 64), final_token_only=False,
                                        ram_available=2**40, device_available=2 * 2**30)
    assert 1 <= tight.batch_size < 64  # the batch shrinks to what fits
    with pytest.raises(ConfigError, match="a batch of 64 prompts of 400 tokens needs about .* free: use a smaller"):
        activation_cache.plan_cache(loaded, points, np.array([400] * 64), final_token_only=False, batch_size=64,
                                    ram_available=2**40, device_available=2 * 2**30)


def test_the_package_exports_it_without_importing_torch():
    assert {"run_with_cache", "ActivationCache"} <= set(geomprobe.__all__)
    assert geomprobe.run_with_cache is run_with_cache
    import subprocess

    done = subprocess.run([sys.executable, "-c", "import sys, geomprobe; print('torch' in sys.modules)"],
                          capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
