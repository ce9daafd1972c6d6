"""Capture and edit activations inside a Hugging Face forward pass: geomprobe's one hook module.

    with edit(loaded.adapter, {"blocks.3.values": lambda v: v * 0.5, (5, "resid"): lambda r: r + delta}):
        logits = loaded.model(**inputs).logits      # hooks are gone after the block, even on error
    with capture(loaded.adapter, ["blocks.2.z", "blocks.2.resid"]) as acts:
        loaded.model(**inputs)
    acts["blocks.2.z"]                               # [batch, pos, n_heads, d_head]

Hook points, named "blocks.{layer}.{point}" or (layer, point); layer may be negative (-1 = last):

    values    [batch, pos, n_kv_heads, d_head]  v = W_V x + b_V, before attention mixes them
                                                (GPT-NeoX: the value part of the fused q/k/v output)
    z         [batch, pos, n_heads, d_head]     each head's attention mix, the input of the output projection
    attn_out  [batch, pos, d_model]             what the attention adds to the residual stream: the
                                                output projection W_O z + b_O (Gemma: its post-norm)
    mlp_out   [batch, pos, d_model]             what the MLP adds to the residual stream (Mixtral: the
                                                mixture-of-experts block; Gemma: the MLP's post-norm)
    resid     [batch, pos, d_model]             the block's output, the residual stream after the layer

How the block combines them: Llama, Mistral, Mixtral and Qwen2 are sequential pre-norm blocks,
mid = x + attn_out, resid = mid + mlp_out (the MLP reads norm(mid)); Gemma 3 too, with attn_out
= post_norm(W_O z) and mlp_out = post_norm(MLP(pre_norm(mid))); GPT-NeoX (parallel residual)
and Phi run both off the block input x, resid = x + attn_out + mlp_out; BERT is post-norm,
resid = LN2(mlp_out + LN1(attn_out + x)). The adapter (geomprobe.adapters) says where each
module lives.

- `edit(adapter, {point: fn})`: fn(tensor) -> tensor of the same shape replaces the activation
  (cast to its dtype); a different shape raises ValueError during the forward pass. Edits run
  before any capture on the same module, so a capture inside or outside the block sees them.
- `capture(adapter, points, final_index=None)`: yields {point: tensor}, the detached activation of
  the last forward pass under the block, or with final_index (int64 [batch]) only the slice at
  pos = final_index[b], [batch, ...]. Keys are the points exactly as passed.
- `watch(adapter, {point: fn})`: calls fn(tensor) and changes nothing (for running statistics).
- `hooked([Hook(module, fn), ...])`: the registration helper the three above and every other hook
  in geomprobe go through; each hook is removed on exit, even on exceptions.

An unknown point or a layer out of range raises geomprobe.errors.ConfigError before anything is
registered. `edit_values` and `capture_final_token` are the per-layer forms extraction and the
ablation suite use (final-token slices only, never a whole cache).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import torch
from torch import nn

from geomprobe.errors import ConfigError

POINTS = ("values", "z", "attn_out", "mlp_out", "resid")
PointKey = str | tuple[int, str]
ValueEdit = Callable[[int, torch.Tensor], torch.Tensor]


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
# named hook points


def parse_point(adapter, key: PointKey) -> tuple[int, str]:
    """'blocks.3.resid' or (3, 'resid') -> (3, 'resid'), the layer checked and made non-negative."""
    if isinstance(key, str):
        match = re.fullmatch(r"blocks\.(-?\d+)\.(\w+)", key)
        if match is None:
            raise ConfigError(f"hook point {key!r} is not of the form 'blocks.<layer>.<point>', e.g. 'blocks.3.resid'")
        layer, point = int(match[1]), match[2]
    elif isinstance(key, tuple) and len(key) == 2 and isinstance(key[1], str):
        layer, point = key
    else:
        raise ConfigError(f"hook point {key!r} is neither 'blocks.<layer>.<point>' nor a (layer, point) pair")
    if point not in POINTS:
        raise ConfigError(f"unknown hook point '{point}' in {key!r}: choose one of {', '.join(POINTS)}")
    try:
        return adapter.check_layer(int(layer)), point
    except ConfigError as error:
        raise ConfigError(f"hook point {key!r}: {error}") from None


def _first(output):
    return output[0] if isinstance(output, tuple) else output


def _with_first(output, tensor):
    return (tensor, *output[1:]) if isinstance(output, tuple) else tensor


def _point_hook(adapter, layer: int, point: str, fn: Callable, editing: bool) -> Hook:
    """The Hook that hands the point's tensor to fn; when editing, fn's result replaces it."""
    shape = adapter.shape
    name = f"blocks.{layer}.{point}"

    def replaced(tensor: torch.Tensor) -> torch.Tensor | None:
        result = fn(tensor)
        if not editing:
            return None
        if not isinstance(result, torch.Tensor) or result.shape != tensor.shape:
            got = tuple(result.shape) if isinstance(result, torch.Tensor) else type(result).__name__
            raise ValueError(f"edit of {name} returned shape {got}, expected {tuple(tensor.shape)}")
        return result

    if point == "values":
        def on_values(module, args, output):
            edited = replaced(adapter.split_values(output))
            return None if edited is None else adapter.merge_values(output, edited)

        return Hook(adapter.value_module(layer), on_values, prepend=editing)
    if point == "z":
        def on_z(module, args):
            mixed = args[0]  # [batch, pos, n_heads * d_head]
            edited = replaced(mixed.view(*mixed.shape[:-1], shape.n_heads, shape.d_head))
            return None if edited is None else (edited.reshape(mixed.shape).to(mixed.dtype), *args[1:])

        return Hook(adapter.output_projection(layer), on_z, pre=True, prepend=editing)
    module = {"attn_out": adapter.attention_residual, "mlp_out": adapter.mlp_output,
              "resid": lambda layer: adapter.layers()[layer]}[point](layer)

    def on_output(module, args, output):
        tensor = _first(output)
        edited = replaced(tensor)
        return None if edited is None else _with_first(output, edited.to(tensor.dtype))

    return Hook(module, on_output, prepend=editing)


def _point_hooks(adapter, fns: Mapping[PointKey, Callable], editing: bool) -> list[Hook]:
    """All points parsed (so a bad name fails before any hook is registered), then their hooks."""
    parsed = [(parse_point(adapter, key), fn) for key, fn in fns.items()]
    return [_point_hook(adapter, layer, point, fn, editing) for (layer, point), fn in parsed]


def edit(adapter, edits: Mapping[PointKey, Callable[[torch.Tensor], torch.Tensor]]):
    """Replace each named activation by fn(activation), same shape (see the module docstring)."""
    return hooked(_point_hooks(adapter, edits, editing=True))


def watch(adapter, fns: Mapping[PointKey, Callable[[torch.Tensor], None]]):
    """Call fn(activation) at each named point on every forward pass; nothing is changed."""
    return hooked(_point_hooks(adapter, fns, editing=False))


def _gather_rows(tensor: torch.Tensor, final_index: torch.Tensor) -> torch.Tensor:
    """tensor [batch, pos, ...] -> [batch, ...] at pos = final_index[b]."""
    rows = torch.arange(tensor.shape[0], device=tensor.device)
    return tensor[rows, final_index.to(tensor.device)]


@contextlib.contextmanager
def capture(adapter, points: Iterable[PointKey], final_index: torch.Tensor | None = None):
    """Yields {point: detached tensor}: the full activation [batch, pos, ...] (a copy) of the last
    forward pass, or its final-token slice [batch, ...] at final_index (int64 [batch])."""
    store: dict[PointKey, torch.Tensor] = {}

    def keeper(key):
        def keep(tensor):
            store[key] = (tensor.detach().clone() if final_index is None
                          else _gather_rows(tensor.detach(), final_index))

        return keep

    with watch(adapter, {key: keeper(key) for key in points}):
        yield store


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


@contextlib.contextmanager
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
            store[name][layer] = _gather_rows(tensor, final_index).detach().float().cpu()

        return keep

    with watch(adapter, {(layer, name): keeper(name, layer) for layer in layers for name in readouts}):
        yield store
