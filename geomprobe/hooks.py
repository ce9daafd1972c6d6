"""Capture and edit activations inside a Hugging Face forward pass: geomprobe's one hook module.

    with edit(loaded.adapter, {"blocks.3.values": lambda v: v * 0.5, (5, "resid"): lambda r: r + delta}):
        logits = loaded.model(**inputs).logits      # hooks are gone after the block, even on error
    with capture(loaded.adapter, ["blocks.2.z", "blocks.2.attn.hook_pattern"]) as acts:
        loaded.model(**inputs)
    acts["blocks.2.z"]                               # [batch, pos, n_heads, d_head]
    point_names(loaded.adapter)                      # every name this model accepts -> its shape

Hook points, in the order the forward pass meets them. A block's are named "blocks.{layer}.{point}"
or (layer, point), layer negative from the end (-1 = last); TransformerLens's name for the same
tensor is accepted too ("blocks.{layer}.{TL name}"). The model's own three have no layer.

    point           TransformerLens name      shape                               edit
    embed           hook_embed                [batch, pos, d_model]               yes
    resid_pre       hook_resid_pre            [batch, pos, d_model]               yes
    ln1             ln1.hook_out              [batch, pos, d_model]               yes
    ln1_normalized  ln1.hook_normalized       [batch, pos, d_model]               capture only
    q               attn.hook_q               [batch, pos, n_heads, d_head]       yes
    k               attn.hook_k               [batch, pos, n_kv_heads, d_head]    yes
    values, v       attn.hook_v               [batch, pos, n_kv_heads, d_head]    yes
    rot_q           attn.hook_rot_q           [batch, pos, n_heads, d_head]       capture only
    rot_k           attn.hook_rot_k           [batch, pos, n_kv_heads, d_head]    capture only
    pattern         attn.hook_pattern         [batch, n_heads, q_pos, k_pos]      yes
    z               attn.hook_z               [batch, pos, n_heads, d_head]       yes
    attn_out        hook_attn_out             [batch, pos, d_model]               yes
    resid_mid       hook_resid_mid            [batch, pos, d_model]               yes (sequential blocks only)
    ln2             ln2.hook_out              [batch, pos, d_model]               yes (not Phi)
    ln2_normalized  ln2.hook_normalized       [batch, pos, d_model]               capture only (not Phi)
    mlp_out         hook_mlp_out              [batch, pos, d_model]               yes
    resid, resid_post  hook_resid_post        [batch, pos, d_model]               yes
    ln_final        ln_final.hook_out         [batch, pos, d_model]               yes (not BERT)
    ln_final_normalized  ln_final.hook_normalized  [batch, pos, d_model]          capture only (not BERT)

- embed: the token embedding module's output (Gemma 3: scaled by sqrt(d_model); GPT-2: without
  its learned positions, which TransformerLens calls hook_pos_embed and geomprobe does not hook).
- resid_pre, resid: the block's input and output. resid_mid: the residual stream between
  attention and the MLP (sequential blocks: resid_pre + attn_out).
- ln1, ln2, ln_final: the output of the norm that attention (q, k, v), the MLP, and the
  unembedding read, with the norm's scale and bias. ln*_normalized: that norm's input before its
  scale and bias, float32: (x - mean) / sqrt(var + eps), or x / sqrt(mean(x^2) + eps) for an RMSNorm.
- q, k, values: the projections W_Q x + b_Q, W_K x + b_K, W_V x + b_V split into heads, before
  rotary and before Qwen3's and Gemma 3's per-head query and key norms. rot_q, rot_k: the queries
  and keys attention's scores read, after those norms and rotary (GPT-2 and BERT: no rotary, so
  rot_q = q and rot_k = k). Grouped-query attention: k, values and rot_k have n_kv_heads heads.
- pattern: the attention probabilities after softmax, float32, 0 at the keys a query may not see
  (causality, padding, a sliding window); a padding query's row holds the real keys before it, or
  zeros where it may see none (past a sliding window).
- z: each head's attention mix, the output projection's input. attn_out: what attention adds to
  the residual stream, W_O z + b_O (Gemma 3: its post-attention norm of that). mlp_out: what the
  MLP adds (Mixtral: the mixture of experts; Gemma 3: its post-feedforward norm).

How the blocks combine them: Llama, Mistral, Mixtral, Qwen2/3 and GPT-2 are sequential pre-norm
blocks, resid_mid = resid_pre + attn_out, resid = resid_mid + mlp_out, the MLP reading
ln2(resid_mid); Gemma 3 too, with attn_out = post_norm(W_O z) and mlp_out = post_norm(MLP(ln2)).
GPT-NeoX (with use_parallel_residual, Pythia's setting) and Phi run attention and the MLP side by
side off the block input, resid = resid_pre + attn_out + mlp_out: no residual lies between them,
so resid_mid is refused there (GPT-NeoX's ln2 is its MLP's own norm of resid_pre; Phi's MLP reads
ln1, so ln2 is refused too). BERT is post-norm, resid = LN2(mlp_out + LN1(attn_out + resid_pre)):
its ln1 is the norm attention reads, the previous block's LN2 (the embeddings' LayerNorm for block
0), equal to resid_pre; its ln2 and resid_mid are both LN1's output; it has no ln_final. The
adapter (geomprobe.adapters) says where each module lives.

- `edit(adapter, {point: fn})`: fn(tensor) -> tensor of the same shape replaces the activation
  (cast to its dtype); a different shape raises ValueError during the forward pass. Edits run
  before any capture of the same point, so a capture inside or outside the block sees them.
  Capture-only points (ln1_normalized, ln2_normalized, ln_final_normalized, rot_q, rot_k) refuse
  an edit: edit the norm's output, or q and k before rotary, instead. An edited resid_mid is
  written through attn_out (attn_out + edited - resid_mid, so the block adds up to the edit up to
  rounding; an identity edit is exact). An edited pattern makes that layer's attention output
  pattern @ v, computed in float32; an identity edit leaves the model's own.
- `capture(adapter, points, final_index=None)`: yields {point: tensor}, the detached activation of
  the last forward pass under the block, or with final_index (int64 [batch]) only the slice at
  pos = final_index[b], [batch, ...] (pattern: the query row at final_index, [batch, n_heads,
  k_pos], formed without the rest). Keys are the points exactly as passed.
- `watch(adapter, {point: fn}, final_index=None)`: calls fn(tensor), or fn(final-token slice),
  and changes nothing (for running statistics; geomprobe.run_with_cache writes its cache so).
- `hooked([Hook(module, fn), ...])`: the registration helper the three above and every other hook
  in geomprobe go through; each hook is removed on exit, even on exceptions.
- `point_names(adapter)`: every name this model accepts, with its shape (the model's dimensions
  as numbers; batch, pos, q_pos and k_pos as words).

rot_q, rot_k and pattern are read inside geomprobe's attention function, so they need the model
loaded with attn_implementation="geomprobe" (load_model's default). TransformerLens 4's
TransformerBridge names them alike (its hook_q and hook_k are before rotary, its hook_rot_q and
hook_rot_k after, firing only where the bridge applies rotary itself; its ln*.hook_normalized is
before the norm's scale and bias, ln*.hook_out after: tests/models/test_tl_cache.py compares them).

An unknown point, one this model does not have, or a layer out of range raises
geomprobe.errors.ConfigError in one line (naming the closest accepted names) before anything is
registered. `edit_values` and `capture_final_token` are the per-layer forms extraction and the
ablation suite use (final-token slices only, never a whole cache).
"""

from __future__ import annotations

import contextlib
import contextvars
import difflib
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import torch
from torch import nn

from geomprobe.errors import ConfigError

PointKey = str | tuple[int, str]
ValueEdit = Callable[[int, torch.Tensor], torch.Tensor]


@dataclass(frozen=True)
class Point:
    """One hook point: geomprobe's name, TransformerLens's, its dimensions (model dimensions by
    their ModelShape names), whether it can be edited, whether it is per block, and the axis of
    its positions (what a final-token slice indexes)."""

    name: str
    tl: str
    dims: tuple[str, ...]
    editable: bool = True
    per_block: bool = True
    pos_axis: int = 1


_STREAM = ("batch", "pos", "d_model")
_HEADS = ("batch", "pos", "n_heads", "d_head")
_KV_HEADS = ("batch", "pos", "n_kv_heads", "d_head")

TABLE: tuple[Point, ...] = (
    Point("embed", "hook_embed", _STREAM, per_block=False),
    Point("resid_pre", "hook_resid_pre", _STREAM),
    Point("ln1", "ln1.hook_out", _STREAM),
    Point("ln1_normalized", "ln1.hook_normalized", _STREAM, editable=False),
    Point("q", "attn.hook_q", _HEADS),
    Point("k", "attn.hook_k", _KV_HEADS),
    Point("values", "attn.hook_v", _KV_HEADS),
    Point("rot_q", "attn.hook_rot_q", _HEADS, editable=False),
    Point("rot_k", "attn.hook_rot_k", _KV_HEADS, editable=False),
    Point("pattern", "attn.hook_pattern", ("batch", "n_heads", "q_pos", "k_pos"), pos_axis=2),
    Point("z", "attn.hook_z", _HEADS),
    Point("attn_out", "hook_attn_out", _STREAM),
    Point("resid_mid", "hook_resid_mid", _STREAM),
    Point("ln2", "ln2.hook_out", _STREAM),
    Point("ln2_normalized", "ln2.hook_normalized", _STREAM, editable=False),
    Point("mlp_out", "hook_mlp_out", _STREAM),
    Point("resid", "hook_resid_post", _STREAM),
    Point("ln_final", "ln_final.hook_out", _STREAM, per_block=False),
    Point("ln_final_normalized", "ln_final.hook_normalized", _STREAM, editable=False, per_block=False),
)
POINT_OF: dict[str, Point] = {p.name: p for p in TABLE}
POINTS = tuple(p.name for p in TABLE if p.per_block)  # a block's points, in forward order
ALIASES = {"v": "values", "resid_post": "resid"}
# every spelling of a point -> its geomprobe name, within a block ("blocks.3.<spelling>") and for the model
_BLOCK_SPELLINGS = {**{p.name: p.name for p in TABLE if p.per_block}, **ALIASES,
                    **{p.tl: p.name for p in TABLE if p.per_block}}
_MODEL_SPELLINGS = {**{p.name: p.name for p in TABLE if not p.per_block},
                    **{p.tl: p.name for p in TABLE if not p.per_block}}
_ATTENTION_FUNCTION = ("rot_q", "rot_k", "pattern")  # read inside geomprobe's attention function


@dataclass(frozen=True)
class Hook:
    """One torch hook to register: fn(module, args, output) as a forward hook, or fn(module, args)
    as a forward pre-hook when pre is True; prepend and with_kwargs as in torch's register_* calls."""

    module: nn.Module
    fn: Callable
    pre: bool = False
    prepend: bool = False
    with_kwargs: bool = False


@contextlib.contextmanager
def hooked(hooks: Iterable[Hook]):
    """Register every hook, yield, and remove them all on exit, even on exceptions (including one
    raised while registering)."""
    handles = []
    try:
        for hook in hooks:
            register = hook.module.register_forward_pre_hook if hook.pre else hook.module.register_forward_hook
            handles.append(register(hook.fn, prepend=hook.prepend, with_kwargs=hook.with_kwargs))
        yield
    finally:
        for handle in reversed(handles):
            handle.remove()


# ---------------------------------------------------------------------------------------------
# names


def resolve_name(key: PointKey, n_layers: int) -> tuple[int | None, str] | None:
    """Any accepted spelling -> (layer made non-negative, or None for the model's own points; the
    geomprobe point name), without a model: None when the spelling is not one, or the layer is out
    of range. 'blocks.3.attn.hook_q', 'blocks.3.q' and (3, 'q') are all (3, 'q')."""
    if isinstance(key, tuple) and len(key) == 2 and isinstance(key[0], int) and isinstance(key[1], str):
        layer, spelling = key
    elif isinstance(key, str):
        if key in _MODEL_SPELLINGS:
            return None, _MODEL_SPELLINGS[key]
        match = re.fullmatch(r"blocks\.(-?\d+)\.(.+)", key)
        if match is None:
            return None
        layer, spelling = int(match[1]), match[2]
    else:
        return None
    if spelling not in _BLOCK_SPELLINGS or not -n_layers <= layer < n_layers:
        return None
    return layer % n_layers, _BLOCK_SPELLINGS[spelling]


def missing_point(adapter, point: str) -> str | None:
    """Why this model has no such point, or None when it has it."""
    if point == "resid_mid" and adapter.parallel_residual():
        return ("its attention and MLP both read the block input and are added to it together (a parallel "
                "residual), so no residual stream lies between them: use resid_pre or resid (resid_post)")
    if point in ("ln2", "ln2_normalized") and adapter.mlp_input_norm(0) is None:
        return "its MLP reads attention's input norm: use ln1"
    if point in ("ln_final", "ln_final_normalized") and adapter.final_norm() is None:
        return "it has no final norm (its last block ends in its own: use the last block's resid)"
    if point in _ATTENTION_FUNCTION:
        from geomprobe.attention import ATTN_IMPLEMENTATION

        implementation = getattr(adapter.config, "_attn_implementation", None)
        if implementation != ATTN_IMPLEMENTATION:
            return (f"it is read inside geomprobe's attention function: load the model with "
                    f"attn_implementation='{ATTN_IMPLEMENTATION}' (load_model's default), not '{implementation}'")
    return None


def point_shape(adapter, point: str) -> tuple[int | str, ...]:
    """A point's shape on this model: model dimensions as numbers, batch and positions as words."""
    shape = adapter.shape
    return tuple(getattr(shape, dim) if hasattr(shape, dim) else dim for dim in POINT_OF[point].dims)


def point_names(adapter) -> dict[str, tuple[int | str, ...]]:
    """Every name this model accepts -> the shape of its tensor, e.g. {"blocks.0.pattern": ("batch",
    8, "q_pos", "k_pos"), "blocks.0.attn.hook_pattern": (...), ...}: geomprobe's names, their
    aliases (v, resid_post) and TransformerLens's, for every layer, without the points this model
    lacks (missing_point). (layer, point) pairs and negative layers are accepted as well."""
    names: dict[str, tuple[int | str, ...]] = {}
    for point in TABLE:
        if missing_point(adapter, point.name) is not None:
            continue
        shape = point_shape(adapter, point.name)
        spellings = [point.name, point.tl] + [alias for alias, name in ALIASES.items() if name == point.name]
        if not point.per_block:
            names.update(dict.fromkeys(spellings, shape))
            continue
        for layer in range(adapter.shape.n_layers):
            names.update({f"blocks.{layer}.{spelling}": shape for spelling in spellings})
    return names


def closest_names(key, candidates: Iterable[str], n: int = 3) -> list[str]:
    """The accepted names most like `key` (difflib), best first."""
    return difflib.get_close_matches(str(key), list(candidates), n=n, cutoff=0.5)


def parse_point(adapter, key: PointKey, editing: bool = False) -> tuple[int | None, str]:
    """'blocks.3.resid', 'blocks.3.hook_resid_post' or (3, 'resid') -> (3, 'resid'); 'hook_embed' ->
    (None, 'embed'). ConfigError (one line) for a name not accepted, a layer out of range, a point
    this model lacks, or an edit of a capture-only point."""
    parsed = resolve_name(key, adapter.shape.n_layers)
    if parsed is None:
        raise _not_accepted(adapter, key)
    layer, point = parsed
    why = missing_point(adapter, point)
    if why is not None:
        raise ConfigError(f"hook point {key!r}: this model has no {point}: {why}")
    if editing and not POINT_OF[point].editable:
        instead = "q or k (before rotary)" if point.startswith("rot_") else point.removesuffix("_normalized")
        raise ConfigError(f"hook point {key!r} can be captured, not edited: edit {instead} instead")
    return layer, point


def _not_accepted(adapter, key) -> ConfigError:
    """The one-line error for a key resolve_name does not accept: a layer out of range, or the
    closest accepted names."""
    if isinstance(key, tuple):
        if len(key) != 2 or not isinstance(key[0], int) or not isinstance(key[1], str):
            return ConfigError(f"hook point {key!r} is not a (layer, point) pair such as (3, 'resid')")
        layer, spelling = key
    elif isinstance(key, str):
        match = re.fullmatch(r"blocks\.(-?\d+)\.(.+)", key)
        layer, spelling = (int(match[1]), match[2]) if match else (None, None)
    else:
        return ConfigError(f"hook point {key!r} is neither a name such as 'blocks.3.resid' nor a (layer, point) pair")
    n_layers = adapter.shape.n_layers
    if layer is not None and spelling in _BLOCK_SPELLINGS:
        return ConfigError(f"hook point {key!r}: layer {layer} is out of range: this model has {n_layers} layers "
                           f"(0-{n_layers - 1})")
    close = closest_names(key if isinstance(key, str) else f"blocks.{layer}.{spelling}", point_names(adapter))
    return ConfigError(f"unknown hook point {key!r}: " + (f"did you mean {', '.join(close)}? " if close else "")
                       + "geomprobe.hooks.point_names(adapter) lists every one")


# ---------------------------------------------------------------------------------------------
# the hooks behind each point


def _first(output):
    return output[0] if isinstance(output, tuple) else output


def _with_first(output, tensor):
    return (tensor, *output[1:]) if isinstance(output, tuple) else tensor


def _gather_rows(tensor: torch.Tensor, final_index: torch.Tensor, axis: int = 1) -> torch.Tensor:
    """tensor [batch, ..., pos (at axis), ...] -> [batch, ...] at pos = final_index[b]."""
    rows = torch.arange(tensor.shape[0], device=tensor.device)
    moved = tensor.movedim(axis, 1)
    return moved[rows, final_index.to(tensor.device)]


@dataclass(frozen=True)
class _Use:
    """One point in use: where, what to call, whether the call's result replaces the tensor, and
    the final-token rows a capture keeps (None: the whole tensor)."""

    layer: int | None
    point: str
    fn: Callable
    editing: bool
    rows: torch.Tensor | None = None

    @property
    def name(self) -> str:
        return self.point if self.layer is None else f"blocks.{self.layer}.{self.point}"

    def call(self, tensor: torch.Tensor) -> torch.Tensor | None:
        """fn's replacement of the tensor when editing (checked: same shape), else None after
        handing fn the tensor (or its final-token rows)."""
        if not self.editing:
            self.fn(tensor if self.rows is None else _gather_rows(tensor, self.rows, POINT_OF[self.point].pos_axis))
            return None
        result = self.fn(tensor)
        if not isinstance(result, torch.Tensor) or result.shape != tensor.shape:
            got = tuple(result.shape) if isinstance(result, torch.Tensor) else type(result).__name__
            raise ValueError(f"edit of {self.name} returned shape {got}, expected {tuple(tensor.shape)}")
        return result


def _on_output(use: _Use):
    """A forward hook handing the module's (first) output to the use."""
    def hook(module, args, output):
        tensor = _first(output)
        edited = use.call(tensor)
        return None if edited is None else _with_first(output, edited.to(tensor.dtype))

    return hook


def _hidden_states(args, kwargs) -> torch.Tensor:
    return args[0] if args else kwargs["hidden_states"]


def _on_block_input(use: _Use):
    """A forward pre-hook (with kwargs) on a block, handing its hidden_states to the use."""
    def hook(module, args, kwargs):
        tensor = _hidden_states(args, kwargs)
        edited = use.call(tensor)
        if edited is None:
            return None
        edited = edited.to(tensor.dtype)
        return ((edited, *args[1:]), kwargs) if args else (args, {**kwargs, "hidden_states": edited})

    return hook


def _on_norm_input(use: _Use, adapter, norm: nn.Module):
    """A forward pre-hook on a norm, handing the use its normalised input (capture only)."""
    def hook(module, args):
        tensor = args[0]
        if use.rows is not None:
            tensor = _gather_rows(tensor, use.rows)
        use.fn(adapter.normalized(norm, tensor))

    return hook


def _on_projection(use: _Use, split: Callable, merge: Callable):
    """A forward hook on a (maybe fused) projection, handing the use its part split into heads."""
    def hook(module, args, output):
        edited = use.call(split(output))
        return None if edited is None else merge(output, edited)

    return hook


def _resid_mid_edit(adapter, use: _Use) -> list[Hook]:
    """Editing resid_mid where the block adds attention's output to its input inline: the block's
    input is kept as it arrives, and attn_out becomes attn_out + edited - (input + attn_out)."""
    seen: dict[str, torch.Tensor] = {}

    def keep_input(module, args, kwargs):
        seen["input"] = _hidden_states(args, kwargs)

    def on_attn_out(module, args, output):
        attn_out = _first(output)
        mid = seen.pop("input") + attn_out
        edited = use.call(mid)
        return _with_first(output, attn_out + (edited.to(mid.dtype) - mid))

    layer = use.layer
    # appended, so it sees the input after every edit of resid_pre (edits are prepended)
    return [Hook(adapter.layers()[layer], keep_input, pre=True, with_kwargs=True),
            Hook(adapter.attention_residual(layer), on_attn_out, prepend=True)]


def _module_hooks(adapter, use: _Use) -> list[Hook]:
    """The torch hooks behind one point in use (all but those read inside the attention function)."""
    layer, point, prepend = use.layer, use.point, use.editing
    if point == "embed":
        return [Hook(adapter.model.get_input_embeddings(), _on_output(use), prepend=prepend)]
    if point in ("ln_final", "ln_final_normalized"):
        module = adapter.final_norm()
    elif point == "resid_pre":
        return [Hook(adapter.layers()[layer], _on_block_input(use), pre=True, prepend=prepend, with_kwargs=True)]
    elif point in ("q", "k", "values"):
        module, split, merge = {
            "q": (adapter.query_module, adapter.split_queries, adapter.merge_queries),
            "k": (adapter.key_module, adapter.split_keys, adapter.merge_keys),
            "values": (adapter.value_module, adapter.split_values, adapter.merge_values)}[point]
        return [Hook(module(layer), _on_projection(use, split, merge), prepend=prepend)]
    elif point == "z":
        shape = adapter.shape

        def on_z(module, args):
            mixed = args[0]  # [batch, pos, n_heads * d_head]
            edited = use.call(mixed.view(*mixed.shape[:-1], shape.n_heads, shape.d_head))
            return None if edited is None else (edited.reshape(mixed.shape).to(mixed.dtype), *args[1:])

        return [Hook(adapter.output_projection(layer), on_z, pre=True, prepend=prepend)]
    elif point == "resid_mid":
        module = adapter.mid_residual_module(layer)
        if module is None and use.editing:
            return _resid_mid_edit(adapter, use)
        if module is None:  # the MLP's norm reads resid_mid, as the block computed it
            return [Hook(adapter.mlp_input_norm(layer), lambda module, args: use.call(args[0]), pre=True)]
    else:
        module = {"ln1": adapter.attention_input_norm, "ln1_normalized": adapter.attention_input_norm,
                  "ln2": adapter.mlp_input_norm, "ln2_normalized": adapter.mlp_input_norm,
                  "attn_out": adapter.attention_residual, "mlp_out": adapter.mlp_output,
                  "resid": lambda layer: adapter.layers()[layer]}[point](layer)
    if point.endswith("_normalized"):
        return [Hook(module, _on_norm_input(use, adapter, module), pre=True)]
    return [Hook(module, _on_output(use), prepend=prepend)]


# rot_q, rot_k and pattern: every use of them active in this context (all `edit`, `capture` and
# `watch` blocks together), served by one attention capture, so that pattern edits run before
# every capture of the pattern whatever the nesting.
_attention_uses: contextvars.ContextVar[tuple[tuple[nn.Module, _Use], ...]] = contextvars.ContextVar(
    "geomprobe_attention_points", default=())


class _AttentionPoints:
    """The attention capture (geomprobe.attention) behind rot_q, rot_k and pattern."""

    def record(self, layer, module, query, key, value, attention_mask, scaling, dropout=0.0):
        uses = [use for owner, use in _attention_uses.get() if owner is module]
        if not uses:
            return None
        for use in uses:
            if use.point in ("rot_q", "rot_k"):  # query [batch, n_heads, pos, d] -> [batch, pos, n_heads, d]
                use.call((query if use.point == "rot_q" else key).transpose(1, 2))
        patterns = [use for use in uses if use.point == "pattern"]
        if not patterns:
            return None
        from geomprobe.attention import pattern_probabilities

        edits = [use for use in patterns if use.editing]
        if not edits and all(use.rows is not None for use in patterns):  # final rows only: no T x T matrix
            for use in patterns:
                rows = pattern_probabilities(module, query, key, attention_mask, scaling, use.rows[:, None])
                use.fn(rows[:, :, 0])
            return None
        original = probs = pattern_probabilities(module, query, key, attention_mask, scaling)
        for use in edits:
            probs = use.call(probs).float()
        for use in patterns:
            if not use.editing:
                use.call(probs)
        if probs is original:
            return None
        groups = query.shape[1] // value.shape[1]
        values = value.float().repeat_interleave(groups, dim=1) if groups > 1 else value.float()
        mixed = torch.matmul(probs, values)  # [batch, n_heads, q_pos, d_head]
        return mixed.transpose(1, 2).contiguous().to(value.dtype), probs


_DISPATCH = _AttentionPoints()


def _using(adapter, fns: Mapping[PointKey, Callable], editing: bool, rows: torch.Tensor | None = None):
    """Every point parsed now (so a bad name fails before any hook is registered, even before the
    `with`), then a context manager that registers their hooks and makes the attention function's
    points active, and removes them all on exit."""
    uses = [_Use(*parse_point(adapter, key, editing), fn, editing, None if editing else rows)
            for key, fn in fns.items()]
    return _active(adapter, uses)


@contextlib.contextmanager
def _active(adapter, uses: list[_Use]):
    hooks = [hook for use in uses if use.point not in _ATTENTION_FUNCTION for hook in _module_hooks(adapter, use)]
    attention = tuple((adapter.attention(use.layer), use) for use in uses if use.point in _ATTENTION_FUNCTION)
    with contextlib.ExitStack() as stack:
        if attention:
            from geomprobe.attention import capture_attention

            active = _attention_uses.get()
            token = _attention_uses.set(active + attention)
            stack.callback(_attention_uses.reset, token)
            if not active:  # the first block to use them makes the one dispatcher active
                stack.enter_context(capture_attention(_DISPATCH))
        stack.enter_context(hooked(hooks))
        yield


def edit(adapter, edits: Mapping[PointKey, Callable[[torch.Tensor], torch.Tensor]]):
    """Replace each named activation by fn(activation), same shape (see the module docstring)."""
    return _using(adapter, edits, editing=True)


def watch(adapter, fns: Mapping[PointKey, Callable[[torch.Tensor], None]], final_index: torch.Tensor | None = None):
    """Call fn(activation) at each named point on every forward pass, or fn(its final-token slice)
    at final_index (int64 [batch]) as `capture` takes it; nothing is changed."""
    return _using(adapter, fns, editing=False, rows=final_index)


def capture(adapter, points: Iterable[PointKey], final_index: torch.Tensor | None = None):
    """Yields {point: detached tensor}: the full activation [batch, pos, ...] (a copy) of the last
    forward pass, or its final-token slice [batch, ...] at final_index (int64 [batch])."""
    store: dict[PointKey, torch.Tensor] = {}

    def keeper(key):
        def keep(tensor):
            store[key] = tensor.detach().clone() if final_index is None else tensor.detach()

        return keep

    return _yielding(_using(adapter, {key: keeper(key) for key in points}, editing=False, rows=final_index), store)


@contextlib.contextmanager
def _yielding(context, value):
    with context:
        yield value


# ---------------------------------------------------------------------------------------------
# the per-layer forms used by extraction and the ablation suite


def edit_values(adapter, layers: Iterable[int], fn: ValueEdit):
    """For each layer in `layers`, replace the value vectors v [batch, pos, n_kv_heads, d_head]
    by fn(layer, v) (same shape) before attention mixes them. Hooks run before any capture hook,
    so extraction inside the block sees the edited values.

        def scale(layer, values):        # METHODS.md section 8
            return values * 0.5
        with edit_values(loaded.adapter, [3, 5], scale):
            loaded.model(**inputs)
    """
    return edit(adapter, {(layer, "values"): (lambda values, layer=layer: fn(layer, values))
                          for layer in sorted({adapter.check_layer(layer) for layer in layers})})


def capture_final_token(adapter, layers: Iterable[int], final_index: torch.Tensor,
                        readouts: Iterable[str] = ("values",)):
    """Record, for each layer, final-token slices as float32 on the CPU: values [batch, n_kv_heads,
    d_head]; z [batch, n_heads, d_head] (input of the attention output projection); resid
    [batch, d_model] (the residual stream after the layer); any other hook point likewise.
    Yields {readout: {layer: tensor}}, keyed by the layers as passed; hooks are removed on exit."""
    readouts = tuple(readouts)
    store: dict[str, dict[int, torch.Tensor]] = {name: {} for name in readouts}

    def keeper(name, layer):
        def keep(tensor):
            store[name][layer] = tensor.detach().float().cpu()

        return keep

    fns = {(layer, name): keeper(name, layer) for layer in layers for name in readouts}
    return _yielding(_using(adapter, fns, editing=False, rows=final_index), store)
