"""Named hook points (geomprobe.hooks.edit / capture / watch) on every tiny family: identity edits
are bit-exact, shapes are the documented ones, captures agree with transformers' own hidden states
and with the tensors the attention function and the output projection really see, zeroing a
block's attention and MLP outputs removes the block, and no hook outlives its block."""

import pytest
import torch
from conftest import ALL_TINY, CAUSAL_TINY

from geomprobe.attention import capture_attention
from geomprobe.errors import ConfigError
from geomprobe.extraction import _pad_id, pad_batch
from geomprobe.families import FAMILIES
from geomprobe.hooks import POINTS, capture, capture_final_token, edit, watch
from geomprobe.mechanisms import skip_layers

TEXTS = ["The cat sat on the mat and looked at the door for a while.", "Short one.",
         "A third prompt of middling size"]


pytestmark = pytest.mark.usefixtures("one_thread")  # tests/conftest.py


def _batch(loaded):
    """Right-padded batch: input_ids, attention_mask [batch, T], final_index [batch]."""
    encoded = [loaded.tokenizer(text)["input_ids"] for text in TEXTS]
    return pad_batch(encoded, _pad_id(loaded.tokenizer))


@torch.no_grad()
def _run(loaded, input_ids, attention_mask, **kwargs):
    return loaded.model(input_ids=input_ids, attention_mask=attention_mask, **kwargs)


def _final(out):
    """What the model ends in: logits, or BERT's last hidden state."""
    return out.logits if hasattr(out, "logits") and out.logits is not None else out.last_hidden_state


def _every_point(adapter):
    return [f"blocks.{layer}.{point}" for layer in range(adapter.shape.n_layers) for point in POINTS]


def _hook_counts(model):
    return {name: (len(module._forward_hooks), len(module._forward_pre_hooks))
            for name, module in model.named_modules()}


@pytest.mark.slow
@pytest.mark.parametrize("name", ALL_TINY)
def test_identity_edits_are_bit_exact_and_real_edits_are_not(load_tiny, name):
    loaded = load_tiny(name)
    input_ids, attention_mask, _ = _batch(loaded)
    plain = _final(_run(loaded, input_ids, attention_mask))
    calls = []

    def identity(tensor):
        calls.append(tensor.shape)
        return tensor

    with edit(loaded.adapter, {point: identity for point in _every_point(loaded.adapter)}):
        same = _final(_run(loaded, input_ids, attention_mask))
    assert len(calls) == len(POINTS) * loaded.adapter.shape.n_layers  # every hook fired once
    assert torch.equal(same, plain)
    for point in POINTS:  # each point is live: zeroing it at layer 1 changes the output
        with edit(loaded.adapter, {f"blocks.1.{point}": torch.zeros_like}):
            zeroed = _final(_run(loaded, input_ids, attention_mask))
        assert (zeroed - plain).abs().max() > 1e-4, point
    assert torch.equal(_final(_run(loaded, input_ids, attention_mask)), plain)


@pytest.mark.parametrize("name", ALL_TINY)
def test_capture_shapes_and_final_token_slices(load_tiny, name):
    loaded = load_tiny(name)
    s = loaded.adapter.shape
    input_ids, attention_mask, final_index = _batch(loaded)
    batch, pos = input_ids.shape
    expected = {"values": (batch, pos, s.n_kv_heads, s.d_head), "z": (batch, pos, s.n_heads, s.d_head),
                "attn_out": (batch, pos, s.d_model), "mlp_out": (batch, pos, s.d_model),
                "resid": (batch, pos, s.d_model)}
    points = _every_point(loaded.adapter)
    with capture(loaded.adapter, points) as full, capture(loaded.adapter, points, final_index) as final:
        _run(loaded, input_ids, attention_mask)
    rows = torch.arange(batch)
    for key in points:
        point = key.split(".")[-1]
        assert tuple(full[key].shape) == expected[point], key
        assert not full[key].requires_grad
        assert torch.equal(final[key], full[key][rows, final_index]), key
    # (layer, point) keys and negative layers name the same points
    last = s.n_layers - 1
    with capture(loaded.adapter, [(-1, "resid"), (last, "z")]) as by_pair:
        _run(loaded, input_ids, attention_mask)
    assert torch.equal(by_pair[(-1, "resid")], full[f"blocks.{last}.resid"])
    assert torch.equal(by_pair[(last, "z")], full[f"blocks.{last}.z"])


def _final_norm(model):
    from geomprobe.adapters import adapter_for

    return adapter_for(model).final_norm()  # None for BERT: no final norm


@pytest.mark.parametrize("name", ALL_TINY)
def test_resid_is_transformers_hidden_state(load_tiny, name):
    """hidden_states[l + 1] is layer l's output as transformers records it; the last entry is the
    final-norm output (what the unembedding reads), where the model has a final norm."""
    loaded = load_tiny(name)
    n_layers = loaded.adapter.shape.n_layers
    input_ids, attention_mask, _ = _batch(loaded)
    with capture(loaded.adapter, [(layer, "resid") for layer in range(n_layers)]) as resid:
        out = _run(loaded, input_ids, attention_mask, output_hidden_states=True)
    hidden = out.hidden_states
    assert len(hidden) == n_layers + 1
    for layer in range(n_layers - 1):
        assert torch.equal(resid[(layer, "resid")], hidden[layer + 1]), layer
    norm = _final_norm(loaded.model)
    last = resid[(n_layers - 1, "resid")]
    with torch.no_grad():
        expected_last = last if norm is None else norm(last)
    torch.testing.assert_close(expected_last, hidden[-1], atol=1e-6, rtol=1e-6)
    assert not torch.equal(resid[(0, "resid")], resid[(1, "resid")])


class _ValuesSeen:
    """An attention capture keeping the value tensor each layer's attention function receives."""

    def __init__(self):
        self.values = {}

    def record(self, layer, module, query, key, value, attention_mask, scaling, dropout=0.0):
        self.values[layer] = value.detach().transpose(1, 2)  # [batch, pos, n_kv_heads, d_head]


@pytest.mark.parametrize("name", ALL_TINY)
def test_values_are_what_attention_reads_and_what_capture_final_token_keeps(load_tiny, name):
    loaded = load_tiny(name)
    adapter = loaded.adapter
    layers = list(range(adapter.shape.n_layers))
    input_ids, attention_mask, final_index = _batch(loaded)
    seen = _ValuesSeen()
    with (capture(adapter, [(layer, "values") for layer in layers]) as full,
          capture_final_token(adapter, layers, final_index, ("values", "z", "resid")) as store,
          capture(adapter, [(layer, p) for layer in layers for p in ("z", "resid")], final_index) as final,
          capture_attention(seen)):
        _run(loaded, input_ids, attention_mask)
    rows = torch.arange(len(final_index))
    for layer in layers:
        assert torch.equal(full[(layer, "values")], seen.values[layer]), layer
        assert torch.equal(store["values"][layer], full[(layer, "values")][rows, final_index].float())
        for point in ("z", "resid"):
            assert torch.equal(store[point][layer], final[(layer, point)].float())


@pytest.mark.parametrize("name", ALL_TINY)
def test_attn_out_is_the_output_projection_of_z(load_tiny, name):
    """attn_out = W_O z + b_O, recomputed from the captured z; zeroing z leaves exactly b_O. With
    sandwich norms (Gemma 3) attn_out is the post-attention norm of that, what joins the residual."""
    loaded = load_tiny(name)
    adapter = loaded.adapter
    input_ids, attention_mask, _ = _batch(loaded)
    with capture(adapter, ["blocks.2.z", "blocks.2.attn_out"]) as acts:
        _run(loaded, input_ids, attention_mask)
    projection = adapter.output_projection(2)
    with torch.no_grad():
        manual = projection(acts["blocks.2.z"].flatten(-2))  # a Linear, or GPT-2's Conv1D (weight stored [in, out])
        post_norm = adapter.attention_residual(2)
        if post_norm is not projection:
            assert FAMILIES[loaded.model.config.model_type].block_norms == 4
            manual = post_norm(manual)
    torch.testing.assert_close(acts["blocks.2.attn_out"], manual, atol=1e-6, rtol=1e-6)
    with edit(adapter, {"blocks.2.z": torch.zeros_like}), capture(adapter, ["blocks.2.attn_out"]) as zeroed:
        _run(loaded, input_ids, attention_mask)
    bias = torch.zeros(adapter.shape.d_model) if projection.bias is None else projection.bias.detach()
    if post_norm is not projection:  # RMSNorm of 0 is 0; of a bias, the bias normalised
        with torch.no_grad():
            bias = post_norm(bias)
    assert torch.equal(zeroed["blocks.2.attn_out"], bias.expand_as(zeroed["blocks.2.attn_out"]))


@pytest.mark.parametrize("name", CAUSAL_TINY)
def test_zeroing_attention_and_mlp_outputs_skips_the_layer(load_tiny, name):
    """Pre-norm residual blocks (sequential or parallel): with attn_out = mlp_out = 0 the block
    returns its input, bit for bit what skipping the block gives."""
    loaded = load_tiny(name)
    adapter = loaded.adapter
    input_ids, attention_mask, _ = _batch(loaded)
    zero = {"blocks.1.attn_out": torch.zeros_like, "blocks.1.mlp_out": torch.zeros_like}
    with edit(adapter, zero), capture(adapter, ["blocks.0.resid", "blocks.1.resid"]) as acts:
        zeroed = _final(_run(loaded, input_ids, attention_mask))
    with skip_layers(adapter, [1]):
        skipped = _final(_run(loaded, input_ids, attention_mask))
    assert torch.equal(acts["blocks.1.resid"], acts["blocks.0.resid"])
    assert torch.equal(zeroed, skipped)
    assert not torch.allclose(zeroed, _final(_run(loaded, input_ids, attention_mask)), atol=1e-4)


def test_zeroing_bert_attention_and_mlp_outputs_leaves_its_two_layernorms(load_tiny):
    """BERT is post-norm: with attn_out = mlp_out = 0 layer l returns LN2(LN1(x)), x its input."""
    loaded = load_tiny("tiny-bert")
    adapter = loaded.adapter
    input_ids, attention_mask, _ = _batch(loaded)
    zero = {"blocks.1.attn_out": torch.zeros_like, "blocks.1.mlp_out": torch.zeros_like}
    with edit(adapter, zero), capture(adapter, ["blocks.1.resid"]) as acts:
        out = _run(loaded, input_ids, attention_mask, output_hidden_states=True)
    block = adapter.layers()[1]
    with torch.no_grad():
        manual = block.output.LayerNorm(block.attention.output.LayerNorm(out.hidden_states[1]))
    torch.testing.assert_close(acts["blocks.1.resid"], manual, atol=1e-6, rtol=1e-6)
    plain = _final(_run(loaded, input_ids, attention_mask))
    assert not torch.allclose(out.last_hidden_state, plain, atol=1e-4)


def test_edits_run_before_captures_whatever_the_nesting(load_tiny):
    loaded = load_tiny("tiny-llama")
    input_ids, attention_mask, _ = _batch(loaded)
    with capture(loaded.adapter, ["blocks.1.values", "blocks.1.mlp_out"]) as outer:
        with edit(loaded.adapter, {"blocks.1.values": lambda v: v * 0 + 0.5, "blocks.1.mlp_out": lambda m: -m}):
            with capture(loaded.adapter, ["blocks.1.mlp_out"]) as inner:
                _run(loaded, input_ids, attention_mask)
    assert torch.all(outer["blocks.1.values"] == 0.5)
    assert torch.equal(outer["blocks.1.mlp_out"], inner["blocks.1.mlp_out"])


@pytest.mark.parametrize("name", ALL_TINY)
def test_hooks_are_removed_after_errors(load_tiny, name):
    loaded = load_tiny(name)
    adapter = loaded.adapter
    input_ids, attention_mask, _ = _batch(loaded)
    _run(loaded, input_ids, attention_mask, output_hidden_states=True)  # transformers' own hooks go in here
    before = _hook_counts(loaded.model)
    points = _every_point(adapter)

    def explode(tensor):
        raise RuntimeError("boom")

    def ignore(tensor):
        pass

    def total(counts):
        return sum(n for pair in counts.values() for n in pair)

    with pytest.raises(RuntimeError, match="boom"):
        with edit(adapter, {points[-1]: explode}), capture(adapter, points), watch(adapter, {points[0]: ignore}):
            assert total(_hook_counts(loaded.model)) == total(before) + 2 + len(points)
            _run(loaded, input_ids, attention_mask)
    assert _hook_counts(loaded.model) == before
    with pytest.raises(ValueError, match=r"edit of blocks\.2\.z returned shape \(3, \d+, \d+, 1\), expected"):
        with edit(adapter, {"blocks.1.resid": lambda r: r, "blocks.2.z": lambda z: z[..., :1]}):
            _run(loaded, input_ids, attention_mask)
    assert _hook_counts(loaded.model) == before
    with pytest.raises(KeyError), capture(adapter, points):
        raise KeyError("an error in the user's own code")
    assert _hook_counts(loaded.model) == before


def test_bad_point_names_are_config_errors_and_register_nothing(load_tiny):
    loaded = load_tiny("tiny-neox")
    adapter = loaded.adapter
    before = _hook_counts(loaded.model)
    cases = {"blocks.1.hook_v": "unknown hook point 'hook_v'.*choose one of values, z, attn_out, mlp_out, resid",
             "blocks.4.resid": r"'blocks.4.resid': layer 4 is out of range: this model has 4 layers \(0-3\)",
             (-5, "z"): "layer -5 is out of range",
             "layers.1.resid": "is not of the form 'blocks.<layer>.<point>'",
             3: "neither 'blocks.<layer>.<point>' nor a \\(layer, point\\) pair"}
    for key, message in cases.items():
        for context in (lambda: edit(adapter, {"blocks.0.resid": lambda r: r, key: lambda r: r}),
                        lambda: capture(adapter, ["blocks.0.resid", key]).__enter__()):
            with pytest.raises(ConfigError, match=message) as error:
                context()
            assert "\n" not in str(error.value)
            assert _hook_counts(loaded.model) == before
