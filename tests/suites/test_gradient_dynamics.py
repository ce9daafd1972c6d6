"""Paper II's gradient identities against autograd on real (tiny) models, and the EM experiment's
pieces: the sticky chain and a short EM-like vs SGD run."""

import copy

import numpy as np
import pytest
import torch

from geomprobe.gradient_dynamics import (
    EMConfig,
    attention_gradients,
    capture_attention_gradients,
    em_dataset,
    em_experiment,
    relative_error,
    sample_chain,
    sticky_transition_matrix,
    train_single_head,
    value_gradient,
)

MODELS = ["tiny-neox", "tiny-llama", "tiny-gpt2"]  # tiny-llama: 8 query heads over 2 kv heads


def _batch(loaded, demo_prompts):
    """Three prompts of different lengths, left-padded, so masking and padding are exercised."""
    tokenizer = copy.copy(loaded.tokenizer)
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    texts = [p.text[:80] for p in sorted(demo_prompts, key=lambda p: len(p.text))[::20][:3]]
    return tokenizer(texts, return_tensors="pt", padding=True)


@pytest.fixture(scope="module")
def float64_models(load_tiny):
    return {name: copy.deepcopy(load_tiny(name).model).to(torch.float64) for name in MODELS}


@pytest.mark.slow
@pytest.mark.parametrize("name", MODELS)
def test_closed_forms_equal_autograd_in_float64(float64_models, demo_prompts, load_tiny, name):
    model = float64_models[name]
    enc = _batch(load_tiny(name), demo_prompts)
    assert (enc["attention_mask"] == 0).any()
    for layer in (0, 2, 3):
        grads = attention_gradients(model, layer, enc["input_ids"], enc["attention_mask"])
        assert np.abs(grads.grad_scores).max() > 1e-6 and np.abs(grads.grad_values).max() > 1e-6
        errors = grads.relative_errors()
        assert errors["scores"] < 1e-10 and errors["values"] < 1e-10, errors


@pytest.mark.slow
@pytest.mark.parametrize("name", MODELS)
def test_closed_forms_equal_autograd_in_float32_and_the_model_is_restored(load_tiny, demo_prompts, name):
    loaded = load_tiny(name)
    enc = _batch(loaded, demo_prompts)
    previous = loaded.model.config._attn_implementation
    grads = attention_gradients(loaded, 1, enc["input_ids"], enc["attention_mask"])
    errors = grads.relative_errors()
    assert errors["scores"] < 1e-5 and errors["values"] < 1e-5, errors
    assert loaded.model.config._attn_implementation == previous
    assert all(p.grad is None for p in loaded.model.parameters())
    with pytest.raises(RuntimeError), capture_attention_gradients(loaded, 1):
        raise RuntimeError("a failing user loss")
    assert loaded.model.config._attn_implementation == previous


@pytest.mark.slow
@pytest.mark.parametrize("name", MODELS)
def test_captured_attention_is_the_models_own(float64_models, demo_prompts, load_tiny, name):
    """The capturing forward gives the model's logits (at real tokens); alpha is 0 on masked keys
    (future and padding) and sums to 1 over the visible ones, and no gradient reaches masked scores."""
    model = float64_models[name]
    enc = _batch(load_tiny(name), demo_prompts)
    with torch.no_grad():
        reference = model(**enc, use_cache=False).logits
    with capture_attention_gradients(model, 2) as capture:
        logits = model(**enc, use_cache=False).logits
        logits[enc["attention_mask"].bool()].logsumexp(-1).sum().backward()
    model.zero_grad(set_to_none=True)
    real = enc["attention_mask"].bool()
    assert torch.allclose(logits[real], reference[real], atol=1e-10)

    grads = capture.result()
    keys_real = enc["attention_mask"].numpy().astype(bool)
    length = keys_real.shape[1]
    causal = np.tril(np.ones((length, length), dtype=bool))
    visible = causal[None, None] & keys_real[:, None, None, :]
    assert np.all(grads.probs[~np.broadcast_to(visible, grads.probs.shape)] == 0)
    assert np.all(grads.grad_scores[~np.broadcast_to(visible, grads.probs.shape)] == 0)
    row_sums = grads.probs.sum(-1)  # [batch, heads, q]
    np.testing.assert_allclose(row_sums.transpose(0, 2, 1)[keys_real], 1.0, atol=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("name", MODELS)
def test_wrong_formulas_fail(float64_models, demo_prompts, load_tiny, name):
    enc = _batch(load_tiny(name), demo_prompts)
    grads = attention_gradients(float64_models[name], 1, enc["input_ids"], enc["attention_mask"])
    n_heads, n_kv_heads = grads.probs.shape[1], grads.values.shape[1]
    values = np.repeat(grads.values, n_heads // n_kv_heads, axis=1)
    b = np.einsum("bhid,bhjd->bhij", grads.upstream, values)
    no_mean_term = grads.probs * b
    assert relative_error(grads.grad_scores, no_mean_term) > 1e-2
    transposed = np.einsum("bhji,bhid->bhjd", grads.probs, grads.upstream)  # alpha_ji instead of alpha_ij
    assert relative_error(grads.grad_values, value_gradient(grads.probs, grads.upstream, n_kv_heads)) < 1e-10
    assert relative_error(grads.grad_values, transposed.reshape(grads.grad_values.shape[0], n_kv_heads, -1,
                                                                *transposed.shape[2:]).sum(2)) > 1e-2
    if n_kv_heads < n_heads:  # GQA: one query head's share is not the kv head's gradient
        first_of_group = np.einsum("bhij,bhid->bhjd", grads.probs, grads.upstream)[:, :: n_heads // n_kv_heads]
        assert relative_error(grads.grad_values, first_of_group) > 1e-2


def test_sticky_chain_transition_matrix_and_samples():
    transition = sticky_transition_matrix(8, 0.3)
    np.testing.assert_allclose(transition.sum(1), 1.0, atol=1e-12)
    np.testing.assert_allclose(np.diag(transition), 0.3)
    # 1 / circular distance: neighbours at distance 1, 2, 3, 4 in the ratio 12 : 6 : 4 : 3
    np.testing.assert_allclose(transition[0, 1:], 0.7 * np.array([1, 1 / 2, 1 / 3, 1 / 4, 1 / 3, 1 / 2, 1]) / (
        2 * (1 + 1 / 2 + 1 / 3) + 1 / 4))
    np.testing.assert_allclose(transition[3], np.roll(transition[0], 3))
    symbols = sample_chain(transition, 40_000, np.random.default_rng(0))
    counts = np.zeros((8, 8))
    np.add.at(counts, (symbols[:-1], symbols[1:]), 1)
    np.testing.assert_allclose(counts / counts.sum(1, keepdims=True), transition, atol=0.025)


def test_em_dataset_is_seeded_and_shaped():
    config = EMConfig(seq_len=300)
    inputs, symbols = em_dataset(config, 3)
    assert inputs.shape == (300, 20) and inputs.dtype == np.float32 and symbols.shape == (300,)
    again, same_symbols = em_dataset(config, 3)
    np.testing.assert_array_equal(inputs, again)
    np.testing.assert_array_equal(symbols, same_symbols)
    assert not np.array_equal(em_dataset(config, 4)[1], symbols)


@pytest.mark.slow
def test_em_like_schedule_beats_sgd_at_step_100():
    config = EMConfig(seq_len=120, steps=100, seeds=(0, 1))  # shorter than the default 300: the same ordering, faster
    result = em_experiment(config)
    for seed in result.seeds:
        assert seed.em_final_loss < seed.sgd_final_loss
        assert seed.em_steps_to_sgd_final is not None and seed.em_steps_to_sgd_final < config.steps
        assert seed.sgd_losses.shape == (config.steps + 1,)
        assert seed.sgd_losses[0] == seed.em_losses[0]  # same data, same initialisation
    assert "paper II" in result.table()
    # a same-schedule pair is identical, so the comparison really is between learning rates
    inputs, symbols = em_dataset(config, 0)
    np.testing.assert_array_equal(train_single_head(config, inputs, symbols, config.lr, 0), result.seeds[0].sgd_losses)
