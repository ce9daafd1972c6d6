"""Capture and edit activations inside a Hugging Face forward pass.

Usage, to rewrite value vectors (PROTOCOL.md section 8) in layers 3 and 5:

    def scale(layer, values):           # values: [batch, pos, n_kv_heads, d_head]
        return values * 0.5
    with edit_values(loaded.adapter, [3, 5], scale):
        loaded.model(**inputs)           # hooks are gone after the block, even on error

Capturing (used by extraction) keeps only the final-token slice of each activation, never a
whole cache.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable

import torch

ValueEdit = Callable[[int, torch.Tensor], torch.Tensor]


@contextlib.contextmanager
def edit_values(adapter, layers: Iterable[int], fn: ValueEdit):
    """For each layer in `layers`, replace the value vectors v [batch, pos, n_kv_heads, d_head]
    by fn(layer, v) (same shape) before attention mixes them. Hooks run before any capture hook,
    so extraction inside the block sees the edited values."""
    handles = []
    try:
        for layer in sorted({adapter.check_layer(layer) for layer in layers}):
            def hook(module, inputs, output, layer=layer):
                values = adapter.split_values(output)
                edited = fn(layer, values)
                if edited.shape != values.shape:
                    raise ValueError(f"value edit for layer {layer} returned shape {tuple(edited.shape)}, "
                                     f"expected {tuple(values.shape)}")
                return adapter.merge_values(output, edited)

            handles.append(adapter.value_module(layer).register_forward_hook(hook, prepend=True))
        yield
    finally:
        for handle in handles:
            handle.remove()


def _gather_rows(tensor: torch.Tensor, final_index: torch.Tensor) -> torch.Tensor:
    """tensor [batch, pos, ...] -> [batch, ...] at pos = final_index[b]."""
    rows = torch.arange(tensor.shape[0], device=tensor.device)
    return tensor[rows, final_index.to(tensor.device)]


@contextlib.contextmanager
def capture_final_token(adapter, layers: Iterable[int], final_index: torch.Tensor,
                        readouts: Iterable[str] = ("values",)):
    """Record, for each layer, final-token slices as float32 on the CPU:
    values [batch, n_kv_heads, d_head]; z [batch, n_heads, d_head] (input of the attention output
    projection); resid [batch, d_model] (the residual stream after the layer).
    Yields {readout: {layer: tensor}}; hooks are removed on exit."""
    readouts = tuple(readouts)
    store: dict[str, dict[int, torch.Tensor]] = {name: {} for name in readouts}
    shape = adapter.shape
    handles = []

    def keep(name, layer, tensor):
        store[name][layer] = tensor.detach().float().cpu()

    try:
        for layer in layers:
            if "values" in readouts:
                def on_value(module, inputs, output, layer=layer):
                    keep("values", layer, _gather_rows(adapter.split_values(output), final_index))

                handles.append(adapter.value_module(layer).register_forward_hook(on_value))
            if "z" in readouts:
                def on_z(module, inputs, layer=layer):
                    z = _gather_rows(inputs[0], final_index)
                    keep("z", layer, z.view(z.shape[0], shape.n_heads, shape.d_head))

                handles.append(adapter.output_projection(layer).register_forward_pre_hook(on_z))
            if "resid" in readouts:
                def on_resid(module, inputs, output, layer=layer):
                    hidden = output[0] if isinstance(output, tuple) else output
                    keep("resid", layer, _gather_rows(hidden, final_index))

                handles.append(adapter.layers()[layer].register_forward_hook(on_resid))
        yield store
    finally:
        for handle in handles:
            handle.remove()
