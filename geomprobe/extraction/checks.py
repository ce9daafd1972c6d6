"""What extraction refuses or warns about: readouts, layers and batch sizes the model cannot give,
prompts too long or without tokens, the unknown token, and NaN or inf in any array (a one-line
NumericalError naming the prompt and the first layer, with advice for the dtype). Apart from the
engine because prefix reuse checks its batches the same way.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

from geomprobe.errors import ConfigError, NumericalError
from geomprobe.prompts import Prompt

from .arrays import _NEXT_TOKEN, READOUTS, ExtractionConfig
from .tokens import _Encoded, unknown_token_id, unknown_words

# Per-layer arrays [batch, n_layers, ...] in the order a layer computes them: the value projection,
# the attention row, the head mix, the block output, and (at the last layer) the final norm's output.
_PER_LAYER = ("values", "attn_entropy_bits", "z", "resid", "hidden")
_HALF = ("float16", "bfloat16")


def _kind(values: np.ndarray) -> str:
    nan, inf = bool(np.isnan(values).any()), bool(np.isinf(values).any())
    return "NaN and inf" if nan and inf else "NaN" if nan else "inf"


def _check_finite(batch: dict[str, np.ndarray], ids: Sequence[str], loaded, layers: Sequence[int],
                  module=None, index: Sequence[int] | None = None) -> None:
    """NumericalError (one line) when any float array of a batch holds NaN or inf: the prompt (the first in
    input order, `index` giving each row's position there), the first layer where non-finite values
    appear (or the next-token logits) and what to do about it."""
    position = np.arange(len(ids)) if index is None else np.asarray(index)

    def earliest(rows: np.ndarray) -> int:  # rows: bool [batch]
        candidates = np.flatnonzero(rows)
        return int(candidates[np.argmin(position[candidates])])

    bad_rows = np.zeros(len(ids), dtype=bool)
    first = None  # (sort key, row, description, the offending values)
    n_layers = loaded.adapter.shape.n_layers
    for name, array in batch.items():
        if array.dtype.kind != "f" or np.isfinite(array).all():
            continue
        bad = ~np.isfinite(array.reshape(array.shape[0], -1)).all(axis=1)
        bad_rows |= bad
        if name in _PER_LAYER:
            per_layer = ~np.isfinite(array.reshape(array.shape[0], array.shape[1], -1)).all(axis=2)  # [batch, L]
            column = int(np.flatnonzero(per_layer.any(axis=0))[0])
            row = earliest(per_layer[:, column])
            layer = layers[column]
            norm = "the final norm's output, " if name == "hidden" and layer == n_layers - 1 else ""
            first_of = ("the first layer" if list(layers) == list(range(n_layers))
                        else f"the first of the extracted layers {', '.join(map(str, layers))}")
            key = (column, _PER_LAYER.index(name))
            found = (key, row, f"{name} at layer {layer} ({norm}{first_of} where any readout is not finite)",
                     array[row, column])
        else:
            row = earliest(bad)
            what = f"the next-token logits (after the last layer; {name})" if name in _NEXT_TOKEN else name
            key = (len(layers), _NEXT_TOKEN.index(name) if name in _NEXT_TOKEN else len(_NEXT_TOKEN))
            found = (key, row, what, array[row])
        if first is None or found[0] < first[0]:
            first = found
    if first is None:
        return
    _, row, where, values = first
    others = int(bad_rows.sum()) - 1
    also = f" and {others} more of its batch's {len(ids)} prompts" if others else ""
    raise NumericalError(f"{_kind(values)} in {where} for prompt '{ids[row]}'{also} (dtype {loaded.dtype}): "
                         f"{_numerical_advice(loaded, module if module is not None else loaded.model)}")


def _first_bad_tensor(module) -> tuple[str, str, int, int] | None:
    """(kind of tensor and name, NaN/inf, non-finite entries, entries) of the first floating parameter or
    buffer of `module` that is not finite, or None. Run once, on error."""
    import torch

    for what, named in (("parameter", module.named_parameters), ("buffer", module.named_buffers)):
        for name, tensor in named():
            if not tensor.is_floating_point() or tensor.device.type == "meta":
                continue
            with torch.no_grad():
                finite = torch.isfinite(tensor)
                if not bool(finite.all()):
                    bad = tensor[~finite].float().cpu().numpy()
                    return f"{what} '{name}'", _kind(bad), int(bad.size), int(tensor.numel())
    return None


def _numerical_advice(loaded, module) -> str:
    dtype = loaded.dtype
    try:
        bad = _first_bad_tensor(module)
    except Exception:  # noqa: BLE001 - the advice must not hide the error it explains
        bad = None
    if bad is not None:
        name, kind, count, total = bad
        held = f"{name} of the model holds {kind} ({count:,} of {total:,} entries)"
        if dtype in _HALF:
            return f"{held}: if the checkpoint's weights are finite, converting them to {dtype} overflowed; " \
                   "try --dtype float32"
        return f"{held}: the weights themselves are not finite (a corrupt checkpoint or an edit); reload the model"
    if dtype == "float16":
        return ("the weights are finite, so the activations overflow float16's range (at most 65504): "
                "try --dtype float32 (or bfloat16)")
    if dtype == "bfloat16":
        return "the weights are finite, so the activations are not finite in bfloat16: try --dtype float32"
    return (f"the weights are all finite, so the model's activations themselves are not finite in {dtype} on this "
            "input (a lower precision will not help): check the prompt's tokens and length (--max-tokens) and "
            "the scale of the model's weights")


def _checked_layers(loaded, config: ExtractionConfig) -> list[int]:
    """The model layers to read, after refusing readouts, a batch size or next tokens the model cannot give."""
    adapter = loaded.adapter
    for readout in config.readouts:
        if readout not in READOUTS:
            raise ConfigError(f"unknown readout '{readout}': choose from {', '.join(READOUTS)}")
    if config.batch_size < 1:
        raise ConfigError("batch size must be at least 1")
    layers = (list(range(adapter.shape.n_layers)) if config.layers is None
              else [adapter.check_layer(layer) for layer in config.layers])
    if config.tokens and not adapter.has_next_token:
        raise ConfigError(f"{loaded.spec} is an encoder ({adapter.family}): it has no next-token probabilities")
    return layers


def _check_lengths(loaded, prompts: Sequence[Prompt], lengths: np.ndarray) -> None:
    """ConfigError for a prompt longer than the model's positions, or one without tokens."""
    limit = getattr(loaded.model.config, "max_position_embeddings", None)
    if limit is not None and len(prompts) and lengths.max() > limit:
        longest = int(np.argmax(lengths))
        raise ConfigError(f"prompt '{prompts[longest].id}' has {lengths[longest]} tokens, more than this model's "
                          f"{limit} positions: shorten it or pass --max-tokens {limit}")
    if (lengths == 0).any():
        raise ConfigError(f"prompt '{prompts[int(np.flatnonzero(lengths == 0)[0])].id}' has no tokens")


def _warn_unknown_tokens(loaded, prompts: Sequence[Prompt], encoded: _Encoded) -> None:
    """One warning when any prompt holds the tokenizer's unknown token (counted among the kept tokens)."""
    unk = unknown_token_id(loaded.tokenizer)
    if unk is None or not len(prompts):
        return
    counts = encoded.count(unk)
    affected = np.flatnonzero(counts)
    if affected.size:
        first = prompts[int(affected[0])]
        words = unknown_words(loaded.tokenizer, first.text)
        seen = f" ({', '.join(map(repr, dict.fromkeys(words)))})" if words else ""
        warnings.warn(f"extract: {affected.size} of {len(prompts)} prompts hold {loaded.spec}'s unknown token "
                      f"{loaded.tokenizer.unk_token!r} ({int(counts.sum())} times; first prompt '{first.id}'{seen}), "
                      "so every word its vocabulary lacks reads as that one token; for SULA prompts use "
                      "geomprobe.prompts_for(loaded, ...)", stacklevel=3)
