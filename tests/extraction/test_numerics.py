"""NaN and inf anywhere in an extraction are an error naming the prompt, the first layer (or the
next-token logits) and advice for the dtype; exact zeros in a distribution are not NaN."""

import math

import numpy as np
import pytest
import torch

from geomprobe.backends.hf import next_token_summary
from geomprobe.errors import NumericalError
from geomprobe.extraction import ExtractionConfig, extract


def _planted(load_tiny, plant, dtype="float32"):
    loaded = load_tiny("tiny-neox", dtype=dtype)  # a fresh copy: its weights are edited
    with torch.no_grad():
        plant(loaded.model.gpt_neox)
    return loaded


def _error(loaded, prompts, **config) -> str:
    with pytest.raises(NumericalError) as caught:
        extract(loaded, prompts, ExtractionConfig(**config), progress=False)
    message = str(caught.value)
    assert "\n" not in message  # one line on the command line
    return message


@pytest.mark.slow
def test_nan_in_the_final_norm_is_an_error_naming_the_prompt_and_the_next_token_logits(load_tiny, varied_prompts):
    """The tester's case: the activations are finite, only the logits are NaN (once masked by nan_to_num,
    which gave next_entropy_bits = -0.0 and a verdict)."""
    loaded = _planted(load_tiny, lambda m: m.final_layer_norm.weight.__setitem__(3, float("nan")))
    prompt = varied_prompts[2]
    message = _error(loaded, [prompt])
    assert message.startswith("NaN in the next-token logits (after the last layer")
    assert f"prompt '{prompt.id}'" in message
    assert "parameter 'gpt_neox.final_layer_norm.weight' of the model holds NaN (1 of 128 entries)" in message
    assert "--dtype float32" not in message  # the run is float32 already: that advice would be useless

    message = _error(loaded, varied_prompts, readouts=("values", "hidden"))  # hidden reads the final norm
    assert "hidden at layer 3 (the final norm's output" in message
    assert f"and {len(varied_prompts) - 1} more of its batch's {len(varied_prompts)} prompts" in message


@pytest.mark.slow
def test_nan_in_layer_1_names_layer_1_and_the_parameter(load_tiny, varied_prompts):
    def plant(m):  # a value row of head 0 (GPT-NeoX packs q, k, v per head: rows 32-47 are head 0's v)
        m.layers[1].attention.query_key_value.weight[40, 5] = float("nan")

    loaded = _planted(load_tiny, plant)
    message = _error(loaded, varied_prompts[:3])
    assert message.startswith("NaN in values at layer 1 (the first layer where any readout is not finite)")
    assert f"prompt '{varied_prompts[0].id}' and 2 more" in message
    assert "parameter 'gpt_neox.layers.1.attention.query_key_value.weight' of the model holds NaN" in message
    assert "the weights themselves are not finite" in message

    message = _error(loaded, varied_prompts[:3], layers=[0, 2])  # layer 1 not extracted: the first one after it
    assert "at layer 2 (the first of the extracted layers 0, 2 where" in message


@pytest.mark.slow
def test_inf_is_an_error_too(load_tiny, varied_prompts):
    loaded = _planted(load_tiny, lambda m: m.layers[1].attention.query_key_value.bias.__setitem__(40, float("inf")))
    message = _error(loaded, varied_prompts[:2])
    assert message.startswith("inf in values at layer 1")
    assert "parameter 'gpt_neox.layers.1.attention.query_key_value.bias' of the model holds inf (1 of 384" in message


def _saturate(value):
    def plant(m):  # finite weights whose activations overflow float16 (|w| = 3000), or float32 (1e30)
        weight = m.layers[1].attention.query_key_value.weight
        weight.copy_(torch.sign(weight.float()) * value)

    return plant


@pytest.mark.slow
def test_the_advice_fits_the_dtype(load_tiny, varied_prompts):
    prompts = varied_prompts[:2]
    extract(_planted(load_tiny, _saturate(3000.0)), prompts, progress=False)  # finite in float32
    half = _error(_planted(load_tiny, _saturate(3000.0), dtype="float16"), prompts)
    assert "(dtype float16)" in half and "overflow float16's range" in half and "try --dtype float32" in half
    assert "holds" not in half  # no parameter is to blame

    single = _error(_planted(load_tiny, _saturate(1e30)), prompts)
    assert "(dtype float32)" in single and "--dtype float32" not in single
    assert "the weights are all finite" in single and "a lower precision will not help" in single

    nan = lambda m: m.layers[1].attention.query_key_value.weight.__setitem__((40, 5), float("nan"))  # noqa: E731
    planted_half = _error(_planted(load_tiny, nan, dtype="float16"), prompts)
    planted_single = _error(_planted(load_tiny, nan), prompts)
    assert "try --dtype float32" in planted_half and "try --dtype float32" not in planted_single
    assert planted_half.split(": ", 1)[1] != planted_single.split(": ", 1)[1]


def test_exact_zero_probabilities_keep_the_entropy_finite():
    """A logit of -inf is a token of probability exactly 0: it adds 0 * log 0 = 0, not NaN."""
    logits = torch.tensor([[0.0, float("-inf"), 0.0, float("-inf")],
                           [1.0, 2.0, 3.0, 4.0],
                           [0.0, -200.0, 0.0, 0.0]])  # exp(-200) underflows float32 to exactly 0
    out = next_token_summary(logits, token_ids=[0, 1])
    entropy = out["next_entropy_bits"]
    assert np.isfinite(entropy).all()
    assert entropy[0] == pytest.approx(1.0, abs=1e-6)  # two equally likely tokens: 1 bit
    p = torch.softmax(torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=torch.float64), -1)
    assert entropy[1] == pytest.approx(float(-(p * p.log2()).sum()), abs=1e-5)
    assert entropy[2] == pytest.approx(math.log2(3), abs=1e-5)
    assert out["token_probs"][0].tolist() == [0.5, 0.0]


def test_nan_or_inf_logits_are_not_masked():
    for bad in (float("nan"), float("inf")):
        logits = torch.tensor([[0.0, bad, 1.0], [0.0, 1.0, 2.0]])
        entropy = next_token_summary(logits, token_ids=[])["next_entropy_bits"]
        assert np.isnan(entropy[0]) and np.isfinite(entropy[1])
    all_masked = next_token_summary(torch.full((1, 3), float("-inf")), token_ids=[])["next_entropy_bits"]
    assert np.isnan(all_masked[0])  # no distribution at all is not "0 bits"
