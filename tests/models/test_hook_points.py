"""Named hook points (geomprobe.hooks.edit / capture / watch) on every tiny family: identity edits
are bit-exact and every editable point is live, shapes are the documented ones (point_names),
captures agree with transformers' own hidden states, with the tensors the attention function and
the output projection really see, and with each other (resid_mid = resid_pre + attn_out, ln1 =
its norm of resid_pre, ...), zeroing a block's attention and MLP outputs removes the block, and no
hook outlives its block. TransformerLens's own cache on the same weights: test_tl_cache.py."""

import pytest
import torch
from conftest import ALL_TINY, CAUSAL_TINY

from geomprobe import attention, hooks
from geomprobe.attention import capture_attention
from geomprobe.errors import ConfigError
from geomprobe.extraction import _pad_id, pad_batch
from geomprobe.families import FAMILIES
from geomprobe.hooks import POINT_OF, TABLE, capture, capture_final_token, edit, missing_point, point_names, watch
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


def _every_point(adapter, editable_only=False):
    """geomprobe's name of every point this model has, at every layer."""
    return [point.name if not point.per_block else f"blocks.{layer}.{point.name}"
            for point in TABLE if missing_point(adapter, point.name) is None and (point.editable or not editable_only)
            for layer in (range(adapter.shape.n_layers) if point.per_block else [None])]


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

    points = _every_point(loaded.adapter, editable_only=True)
    with edit(loaded.adapter, {point: identity for point in points}):
        same = _final(_run(loaded, input_ids, attention_mask))
    assert len(calls) == len(points)  # every hook fired once
    assert torch.equal(same, plain)
    for point in [p for p in points if p.startswith("blocks.1.") or "." not in p]:  # each point is live
        with edit(loaded.adapter, {point: torch.zeros_like}):
            zeroed = _final(_run(loaded, input_ids, attention_mask))
        assert (zeroed - plain).abs().max() > 1e-4, point
    assert torch.equal(_final(_run(loaded, input_ids, attention_mask)), plain)


@pytest.mark.parametrize("name", ALL_TINY)
def test_capture_shapes_and_final_token_slices(load_tiny, name):
    loaded = load_tiny(name)
    s = loaded.adapter.shape
    input_ids, attention_mask, final_index = _batch(loaded)
    batch, pos = input_ids.shape
    sizes = {"batch": batch, "pos": pos, "q_pos": pos, "k_pos": pos}
    shapes = point_names(loaded.adapter)
    points = _every_point(loaded.adapter)
    with capture(loaded.adapter, points) as full, capture(loaded.adapter, points, final_index) as final:
        _run(loaded, input_ids, attention_mask)
    rows = torch.arange(batch)
    for key in points:
        assert tuple(full[key].shape) == tuple(sizes.get(dim, dim) for dim in shapes[key]), key
        assert not full[key].requires_grad
        axis = POINT_OF[key.split(".")[-1]].pos_axis  # pattern: the query axis
        torch.testing.assert_close(final[key], full[key].movedim(axis, 1)[rows, final_index], atol=1e-6, rtol=1e-6,
                                   msg=key)  # pattern's final rows are formed alone: equal up to rounding
    assert full["blocks.0.pattern"].shape == (batch, s.n_heads, pos, pos)
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

    in_attention = [p for p in points if p.rsplit(".", 1)[-1] in ("rot_q", "rot_k", "pattern")]  # no module hook
    with pytest.raises(RuntimeError, match="boom"):
        with (edit(adapter, {"blocks.3.resid": explode, "blocks.3.pattern": lambda p: p}), capture(adapter, points),
              watch(adapter, {points[0]: ignore})):
            assert total(_hook_counts(loaded.model)) == total(before) + 2 + len(points) - len(in_attention)
            assert len(hooks._attention_uses.get()) == len(in_attention) + 1
            _run(loaded, input_ids, attention_mask)
    assert _hook_counts(loaded.model) == before
    assert hooks._attention_uses.get() == () and attention._active.get() == ()
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
    cases = {"blocks.1.hook_v": r"unknown hook point 'blocks.1.hook_v': did you mean blocks.1.attn.hook_v\b.*point_names",
             "blocks.1.hook_pattern": r"did you mean blocks.1.attn.hook_pattern\b",
             "blocks.4.resid": r"'blocks.4.resid': layer 4 is out of range: this model has 4 layers \(0-3\)",
             "blocks.4.attn.hook_z": "layer 4 is out of range",
             (-5, "z"): "layer -5 is out of range",
             "layers.1.resid": "unknown hook point 'layers.1.resid': did you mean blocks.1.resid",
             "ln_finale": "did you mean ln_final",
             (1, "hook_v"): "unknown hook point \\(1, 'hook_v'\\): did you mean blocks.1.attn.hook_v",
             (1, 2, 3): "is not a \\(layer, point\\) pair",
             3: "neither a name such as 'blocks.3.resid' nor a \\(layer, point\\) pair",
             "blocks.1.resid_mid": "this model has no resid_mid: its attention and MLP both read the block input",
             "blocks.1.hook_resid_mid": "no residual stream lies between them: use resid_pre or resid"}
    for key, message in cases.items():
        for context in (lambda: edit(adapter, {"blocks.0.resid": lambda r: r, key: lambda r: r}),
                        lambda: capture(adapter, ["blocks.0.resid", key]).__enter__()):
            with pytest.raises(ConfigError, match=message) as error:
                context()
            assert "\n" not in str(error.value)
            assert _hook_counts(loaded.model) == before
            assert hooks._attention_uses.get() == ()


@pytest.mark.parametrize("point, instead", [("blocks.1.ln1_normalized", "edit ln1 instead"),
                                            ("blocks.1.ln2.hook_normalized", "edit ln2 instead"),
                                            ("ln_final.hook_normalized", "edit ln_final instead"),
                                            ("blocks.1.attn.hook_rot_q", r"edit q or k \(before rotary\) instead"),
                                            ("blocks.1.rot_k", r"edit q or k \(before rotary\) instead")])
def test_capture_only_points_refuse_edits(load_tiny, point, instead):
    adapter = load_tiny("tiny-llama").adapter
    with pytest.raises(ConfigError, match=f"can be captured, not edited: {instead}"):
        edit(adapter, {point: lambda t: t}).__enter__()
    with capture(adapter, [point]):  # capturing is fine
        pass


def test_points_a_family_lacks_are_refused_saying_why(load_tiny):
    phi, bert = load_tiny("tiny-phi").adapter, load_tiny("tiny-bert").adapter
    for point in ("blocks.0.ln2", "blocks.0.ln2.hook_normalized"):
        with pytest.raises(ConfigError, match="this model has no ln2.*: its MLP reads attention's input norm: use ln1"):
            capture(phi, [point]).__enter__()
    with pytest.raises(ConfigError, match="this model has no resid_mid: .*parallel residual"):
        capture(phi, ["blocks.0.hook_resid_mid"]).__enter__()
    with pytest.raises(ConfigError, match="this model has no ln_final: it has no final norm"):
        capture(bert, ["ln_final.hook_out"]).__enter__()
    names = point_names(phi)
    assert "blocks.0.ln2" not in names and "blocks.0.hook_resid_mid" not in names and "blocks.0.ln1" in names
    assert "ln_final" not in point_names(bert) and "blocks.0.resid_mid" in point_names(bert)


def test_attention_function_points_need_geomprobe_attention(load_tiny):
    eager = load_tiny("tiny-llama", attn_implementation="eager")
    for point in ("blocks.0.pattern", "blocks.0.attn.hook_rot_q", "blocks.0.rot_k"):
        with pytest.raises(ConfigError, match="read inside geomprobe's attention function: load the model with "
                                              "attn_implementation='geomprobe'.*not 'eager'"):
            capture(eager.adapter, [point]).__enter__()
    with capture(eager.adapter, ["blocks.0.q", "blocks.0.z"]):  # the module hooks work on any attention
        pass


@pytest.mark.parametrize("name", ALL_TINY)
def test_every_spelling_names_the_same_tensor(load_tiny, name):
    """point_names lists geomprobe's names, the aliases v and resid_post and TransformerLens's names;
    each spelling of a point captures the same tensor, and every listed name parses."""
    loaded = load_tiny(name)
    adapter = loaded.adapter
    names = point_names(adapter)
    assert all(f"blocks.{adapter.shape.n_layers - 1}.{p.tl}" in names for p in TABLE
               if p.per_block and missing_point(adapter, p.name) is None)
    spellings = [key for key in names if key.startswith("blocks.2.") or not key.startswith("blocks.")]
    input_ids, attention_mask, _ = _batch(loaded)
    with capture(adapter, spellings) as got:
        _run(loaded, input_ids, attention_mask)
    by_point = {}
    for key in spellings:
        point = hooks.resolve_name(key, adapter.shape.n_layers)
        by_point.setdefault(point, []).append(key)
    for point, keys in by_point.items():
        assert len(keys) >= 2, point  # every point has at least its own name and TransformerLens's
        for key in keys[1:]:
            assert torch.equal(got[key], got[keys[0]]), key
    assert by_point[(2, "values")] == ["blocks.2.values", "blocks.2.attn.hook_v", "blocks.2.v"]
    assert by_point[(2, "resid")] == ["blocks.2.resid", "blocks.2.hook_resid_post", "blocks.2.resid_post"]
    with capture(adapter, [(-2, "hook_resid_post"), (2, "v")]) as pairs:
        _run(loaded, input_ids, attention_mask)
    assert torch.equal(pairs[(-2, "hook_resid_post")], got["blocks.2.resid"])
    assert torch.equal(pairs[(2, "v")], got["blocks.2.values"])


@pytest.mark.parametrize("name", ALL_TINY)
def test_the_residual_points_add_up(load_tiny, name):
    """resid_pre is transformers' hidden_states[l] (the embeddings' output at l = 0); sequential
    pre-norm blocks: resid_mid = resid_pre + attn_out and resid = resid_mid + mlp_out, bit for bit;
    parallel blocks: resid = resid_pre + attn_out + mlp_out; BERT: resid_mid = ln2 and resid_pre = ln1."""
    loaded = load_tiny(name)
    adapter = loaded.adapter
    input_ids, attention_mask, _ = _batch(loaded)
    layer = 1
    points = ["resid_pre", "attn_out", "mlp_out", "resid", "ln1", "ln1_normalized"]
    points += [p for p in ("resid_mid", "ln2", "ln2_normalized") if missing_point(adapter, p) is None]
    with capture(adapter, [(layer, p) for p in points] + ["embed"]) as got:
        out = _run(loaded, input_ids, attention_mask, output_hidden_states=True)
    acts = {p: got[(layer, p)] for p in points}
    with capture(adapter, [(0, "resid_pre")]) as first:
        _run(loaded, input_ids, attention_mask)
    assert torch.equal(first[(0, "resid_pre")], out.hidden_states[0])
    assert torch.equal(acts["resid_pre"], out.hidden_states[layer])
    if FAMILIES[loaded.model.config.model_type].rotary != "none":  # learned positions are added after embed
        assert torch.equal(got["embed"], out.hidden_states[0])
    if name == "tiny-bert":
        assert torch.equal(acts["ln1"], acts["resid_pre"]) and torch.equal(acts["ln2"], acts["resid_mid"])
    elif adapter.parallel_residual():
        torch.testing.assert_close(acts["resid"], acts["resid_pre"] + acts["attn_out"] + acts["mlp_out"])
    else:
        assert torch.equal(acts["resid_mid"], acts["resid_pre"] + acts["attn_out"])
        assert torch.equal(acts["resid"], acts["resid_mid"] + acts["mlp_out"])
    # each norm output is its scale (and bias) applied to the normalised input
    for norm_point, module in (("ln1", adapter.attention_input_norm(layer)), ("ln2", adapter.mlp_input_norm(layer))):
        if norm_point not in acts:
            continue
        bias = getattr(module, "bias", None)
        rebuilt = acts[f"{norm_point}_normalized"] * adapter.norm_scale(module) + (0 if bias is None else bias.detach())
        torch.testing.assert_close(rebuilt, acts[norm_point].float(), atol=1e-5, rtol=1e-5)
        assert acts[f"{norm_point}_normalized"].dtype == torch.float32


@pytest.mark.parametrize("name", ALL_TINY)
def test_q_and_k_are_the_projections_and_rot_q_what_attention_reads(load_tiny, name):
    """q and k are the projections' outputs split into heads; rot_q and rot_k are the tensors
    geomprobe's attention function receives. Rotary turns position 0 by angle 0 and keeps norms, so
    there rot_q = q (families with a per-head query/key norm excepted); GPT-2 and BERT have no rotary."""
    loaded = load_tiny(name)
    adapter = loaded.adapter
    row = FAMILIES[loaded.model.config.model_type]
    input_ids, attention_mask, _ = _batch(loaded)
    seen = _QKSeen()
    with capture(adapter, ["blocks.1.q", "blocks.1.k", "blocks.1.rot_q", "blocks.1.rot_k", "blocks.1.ln1"]) as got, \
            capture_attention(seen):
        _run(loaded, input_ids, attention_mask)
    assert torch.equal(got["blocks.1.rot_q"], seen.query[1]) and torch.equal(got["blocks.1.rot_k"], seen.key[1])
    with torch.no_grad():
        projected = adapter.query_module(1)(got["blocks.1.ln1"])
    torch.testing.assert_close(got["blocks.1.q"], adapter.split_queries(projected), atol=1e-6, rtol=1e-6)
    if row.key_norm:
        return
    for plain, rotated in (("q", "rot_q"), ("k", "rot_k")):
        q, rot = got[f"blocks.1.{plain}"], got[f"blocks.1.{rotated}"]
        if row.rotary == "none":
            assert torch.equal(rot, q)
        else:
            torch.testing.assert_close(rot[:, 0], q[:, 0], atol=1e-6, rtol=1e-6)
            torch.testing.assert_close(rot.norm(dim=-1), q.norm(dim=-1), atol=1e-5, rtol=1e-5)
            assert not torch.allclose(rot[:, 1:], q[:, 1:], atol=1e-4)


class _QKSeen:
    """An attention capture keeping the query and key each layer's attention function receives."""

    def __init__(self):
        self.query, self.key = {}, {}

    def record(self, layer, module, query, key, value, attention_mask, scaling, dropout=0.0):
        self.query[layer], self.key[layer] = query.detach().transpose(1, 2), key.detach().transpose(1, 2)


@pytest.mark.parametrize("name", ALL_TINY)
def test_pattern_is_eager_attention_and_editing_it_moves_z(load_tiny, name):
    """The pattern equals the probabilities transformers' eager attention returns (padding keys 0);
    a pattern that puts every query on key 0 makes each head's z the value at position 0 (of its
    kv group); an identity edit changes nothing, a copied pattern next to nothing."""
    loaded = load_tiny(name)
    adapter = loaded.adapter
    s = adapter.shape
    input_ids, attention_mask, _ = _batch(loaded)
    with capture(adapter, ["blocks.2.pattern", "blocks.2.values"]) as got:
        plain = _final(_run(loaded, input_ids, attention_mask))
    eager = load_tiny(name, attn_implementation="eager")
    eager.model.load_state_dict(loaded.model.state_dict())  # the session's copy, whatever a test changed in it
    reference = _run(eager, input_ids, attention_mask, output_attentions=True).attentions[2]
    real = attention_mask.bool()
    pattern = got["blocks.2.pattern"]
    torch.testing.assert_close(pattern[real[:, None, :, None].expand_as(pattern)],
                               reference[real[:, None, :, None].expand_as(reference)], atol=1e-5, rtol=1e-5)
    assert torch.all(pattern[~real[:, None, None, :].expand_as(pattern)] == 0)
    sums = pattern.sum(-1)  # [batch, heads, q_pos]: 1 at real queries (padding ones past a window see no key)
    torch.testing.assert_close(sums[real[:, None, :].expand_as(sums)], torch.ones(int(real.sum()) * s.n_heads))

    def first_key(probs):
        return torch.zeros_like(probs).index_fill(-1, torch.tensor([0]), 1.0)

    with edit(adapter, {"blocks.2.attn.hook_pattern": first_key}), capture(adapter, ["blocks.2.z", "blocks.2.pattern"]) as on:
        _run(loaded, input_ids, attention_mask)
    assert torch.equal(on["blocks.2.pattern"], first_key(pattern))  # the capture sees the edit
    values_at_0 = got["blocks.2.values"][:, :1].repeat_interleave(s.n_heads // s.n_kv_heads, dim=2)
    torch.testing.assert_close(on["blocks.2.z"], values_at_0.expand_as(on["blocks.2.z"]), atol=1e-6, rtol=1e-6)
    with edit(adapter, {"blocks.2.pattern": lambda p: p}):
        assert torch.equal(_final(_run(loaded, input_ids, attention_mask)), plain)
    with edit(adapter, {"blocks.2.pattern": lambda p: p.clone()}):
        torch.testing.assert_close(_final(_run(loaded, input_ids, attention_mask)), plain, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("name", CAUSAL_TINY)
def test_editing_resid_mid_writes_the_residual_stream(load_tiny, name):
    """An edited resid_mid is what the block carries on: the MLP's norm reads it and resid = it +
    mlp_out, up to rounding. Parallel blocks have none."""
    loaded = load_tiny(name)
    adapter = loaded.adapter
    if adapter.parallel_residual():
        with pytest.raises(ConfigError, match="no resid_mid"):
            edit(adapter, {"blocks.1.hook_resid_mid": lambda mid: mid})
        return
    input_ids, attention_mask, _ = _batch(loaded)
    with edit(adapter, {"blocks.1.hook_resid_mid": lambda mid: torch.full_like(mid, 0.25)}), \
            capture(adapter, ["blocks.1.resid_mid", "blocks.1.mlp_out", "blocks.1.resid", "blocks.1.attn_out"]) as got:
        _run(loaded, input_ids, attention_mask)
    torch.testing.assert_close(got["blocks.1.resid_mid"], torch.full_like(got["blocks.1.resid_mid"], 0.25),
                               atol=1e-5, rtol=0)
    assert torch.equal(got["blocks.1.resid"], got["blocks.1.resid_mid"] + got["blocks.1.mlp_out"])
