"""The extraction engine (METHODS.md section 1): one forward pass per prompt, final-token slices.

For every prompt and every requested layer it records, at the final non-padding token:
    values             float32 [n_prompts, n_layers, n_kv_heads, d_head]   (v = W_V x + b_V)
    attn_entropy_bits  float32 [n_prompts, n_layers, n_heads]    (that token's attention row)
    n_visible_keys     int32   [n_prompts, n_layers]             (keys the row may weight)
    next_entropy_bits  float32 [n_prompts]                       (causal LMs only)
    token_probs        float32 [n_prompts, n_tokens]             (when tokens are named)
    z                  float32 [n_prompts, n_layers, n_heads, d_head]     (readout "z")
    resid              float32 [n_prompts, n_layers, d_model]             (readout "resid")
    hidden             float32 [n_prompts, n_layers, d_model]             (readout "hidden")
    n_tokens           int32   [n_prompts]

The residual readouts differ at the last layer only:
    resid[:, i]   the output of block layers[i], the residual stream after it, before any final norm.
    hidden[:, i]  the model's own `output_hidden_states=True` entry hidden_states[layers[i] + 1], as
                  transformers defines it: block l's output for l < L - 1, and for l = L - 1 the
                  output AFTER the final norm (GPT-NeoX final_layer_norm, Llama-like norm, Phi
                  final_layernorm), i.e. hidden_states[-1], what the unembedding reads and what the
                  papers' code (analyze_geometry.py) calls the final hidden state. Encoders (BERT)
                  have no final norm: there hidden equals resid at every layer.

Prompts are sorted by length, batched, right-padded; a prompt's results do not depend on its
batch. With an output directory, each finished batch is written as a shard right away, so an
interrupted run resumes where it stopped; the arrays above are assembled at the end, on disk, one
shard at a time, and returned memory-mapped, so memory does not grow with the number of prompts.
Opening the directory again removes what an interruption can leave: temporary files of atomic
writes, shards beside a finished extraction, and (with a warning) shards that cannot be read,
whose prompts are recomputed.

NaN or inf in any array is an error (NumericalError), naming the prompt and the first layer where
it appears (or the next-token logits), with advice for the dtype and the first parameter of the
model that is not finite, if any.

Two backends produce the same arrays: "hf" (geomprobe's own hooks and attention function) and
"tl" (TransformerLens 4 TransformerBridge), see geomprobe.backends.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import sys
import tempfile
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from geomprobe import allocator
from geomprobe.console import ProgressReport
from geomprobe.errors import ConfigError, NumericalError, RunDirectoryError
from geomprobe.prompts import Prompt, prompts_hash
from geomprobe.rundir import FILE_MODE, atomic_save_npz, atomic_write_json, disk_error, remove_temporaries

READOUTS = ("values", "z", "resid", "hidden")
BACKENDS = ("hf", "tl")


@dataclass
class ExtractionConfig:
    """What determines extraction results (the run fingerprint is computed from it)."""

    layers: list[int] | None = None  # None: all layers
    readouts: tuple[str, ...] = ("values",)
    tokens: list[str] = field(default_factory=list)  # named next tokens whose probabilities to keep
    backend: str = "hf"
    max_tokens: int | None = None  # longer prompts keep their last max_tokens tokens
    batch_size: int = 8

    def fingerprint_fields(self) -> dict:
        return {"layers": self.layers, "readouts": list(self.readouts), "tokens": self.tokens,
                "backend": self.backend, "max_tokens": self.max_tokens}


class NotExtractedError(ConfigError, KeyError):
    """A layer or readout that an Extraction does not hold (a KeyError too, for code that catches one)."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


# Arrays with a layer axis (axis 1, in the order of Extraction.layers), and what gives each array.
_LAYER_ARRAYS = ("values", "attn_entropy_bits", "n_visible_keys", "z", "resid", "hidden")
_HOW_TO_GET = {
    "values": "ExtractionConfig(readouts=('values', ...))", "z": "ExtractionConfig(readouts=(..., 'z'))",
    "resid": "ExtractionConfig(readouts=(..., 'resid'))", "hidden": "ExtractionConfig(readouts=(..., 'hidden'))",
    "token_probs": "ExtractionConfig(tokens=[' dax', ...]) (single tokens)",
}


def _layer_list(layers: Sequence[int]) -> str:
    """'0-23' for consecutive layers, else '0, 3, 5'."""
    layers = list(layers)
    if len(layers) > 2 and layers == list(range(layers[0], layers[-1] + 1)):
        return f"{layers[0]}-{layers[-1]}"
    return ", ".join(map(str, layers)) or "none"


def _array(name: str, doc: str) -> property:
    """A property for Extraction.arrays[name], NotExtractedError when it was not extracted."""
    return property(lambda self: self[name], doc=doc)


@dataclass(repr=False)
class Extraction:
    """Arrays in prompt order (see module docstring) and what they came from. From an extraction with an
    out_dir (and load_extraction) the arrays are read-only np.memmap views of its .npy files in `directory`;
    without one, ordinary in-memory arrays (directory None).

        ex.values                 float32 [n_prompts, n_layers, n_kv_heads, d_head]  (also ex["values"])
        ex.layer(3)["values"]     float32 [n_prompts, n_kv_heads, d_head], model layer 3 (not column 3)
        ex.layers                 the model layers, in the order of the layer axis

    A readout or layer that was not extracted raises NotExtractedError (a ConfigError and a KeyError), in
    one line that says what the extraction holds."""

    prompt_ids: list[str]
    layers: list[int]
    arrays: dict[str, np.ndarray]
    token_ids: list[int]
    meta: dict
    directory: Path | None = None

    def __getitem__(self, name: str) -> np.ndarray:
        try:
            return self.arrays[name]
        except KeyError:
            raise NotExtractedError(self._missing(name)) from None

    def _missing(self, name: str) -> str:
        held = ", ".join(self.arrays) or "nothing"
        if name == "next_entropy_bits":
            how = f"{self.meta.get('family', 'this model')} is an encoder, with no next-token distribution"
        elif name in _HOW_TO_GET:
            how = f"extract with {_HOW_TO_GET[name]}"
        else:
            how = f"known arrays: {', '.join(dict.fromkeys((*_LAYER_ARRAYS, *_NEXT_TOKEN, 'n_tokens')))}"
        return f"this extraction has no '{name}' (it holds {held}): {how}"

    @property
    def n_prompts(self) -> int:
        return len(self.prompt_ids)

    def layer(self, layer: int) -> dict[str, np.ndarray]:
        """The per-layer arrays at model layer `layer` (an index of the model's layers, as in
        ExtractionConfig.layers, not a column of the layer axis), without their layer axis: e.g.
        values float32 [n_prompts, n_kv_heads, d_head], attn_entropy_bits float32 [n_prompts, n_heads]."""
        if isinstance(layer, bool) or not isinstance(layer, (int, np.integer)):
            raise NotExtractedError(f"layer takes a model layer index (an int), not {type(layer).__name__}")
        if int(layer) not in self.layers:
            raise NotExtractedError(f"layer {layer} was not extracted: this extraction has layers "
                                    f"{_layer_list(self.layers)}; extract with ExtractionConfig(layers=[..., {layer}])")
        column = self.layers.index(int(layer))
        return {name: self.arrays[name][:, column] for name in _LAYER_ARRAYS if name in self.arrays}

    values = _array("values", "float32 [n_prompts, n_layers, n_kv_heads, d_head]")
    attn_entropy_bits = _array("attn_entropy_bits", "float32 [n_prompts, n_layers, n_heads]")
    n_visible_keys = _array("n_visible_keys", "int32 [n_prompts, n_layers]")
    z = _array("z", "float32 [n_prompts, n_layers, n_heads, d_head] (readout 'z')")
    resid = _array("resid", "float32 [n_prompts, n_layers, d_model] (readout 'resid')")
    hidden = _array("hidden", "float32 [n_prompts, n_layers, d_model] (readout 'hidden')")
    next_entropy_bits = _array("next_entropy_bits", "float32 [n_prompts] (causal LMs)")
    token_probs = _array("token_probs", "float32 [n_prompts, n_tokens] (named tokens)")
    n_tokens = _array("n_tokens", "int32 [n_prompts]")

    def __repr__(self) -> str:
        model = self.meta.get("model") or self.meta.get("family") or "a model"
        n_layers = (self.meta.get("shape") or {}).get("n_layers")
        of = "" if n_layers is None else f" (all {n_layers})" if self.layers == list(range(n_layers)) \
            else f" (of {n_layers})"
        lines = [f"Extraction: {self.n_prompts} prompts, {model}, layers {_layer_list(self.layers)}{of}, "
                 f"backend {self.meta.get('backend', 'hf')}"]
        known = (*_LAYER_ARRAYS, *_NEXT_TOKEN, "n_tokens")
        for name in sorted(self.arrays, key=lambda n: (known.index(n) if n in known else len(known), n)):
            array = self.arrays[name]
            part = f"{name} {array.dtype} [{', '.join(map(str, array.shape))}]"
            if len(lines) > 1 and len(lines[-1]) + len(part) < 110:
                lines[-1] += "; " + part
            else:
                lines.append("  " + part)
        if self.meta.get("tokens"):
            lines.append(f"  token_probs of {', '.join(map(repr, self.meta['tokens']))}")
        lines.append(f"  memory-mapped from {self.directory}" if self.directory is not None else "  in memory")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        """A card for Jupyter: what the repr says, each array a table row (name, dtype, shape)."""
        from html import escape

        model = self.meta.get("model") or self.meta.get("family") or "a model"
        known = (*_LAYER_ARRAYS, *_NEXT_TOKEN, "n_tokens")
        rows = "".join(
            f"<tr><td style='padding:1px 12px 1px 0'><code>{escape(name)}</code></td>"
            f"<td style='padding:1px 12px 1px 0'>{escape(str(self.arrays[name].dtype))}</td>"
            f"<td>[{escape(', '.join(map(str, self.arrays[name].shape)))}]</td></tr>"
            for name in sorted(self.arrays, key=lambda n: (known.index(n) if n in known else len(known), n)))
        where = f"memory-mapped from <code>{escape(str(self.directory))}</code>" if self.directory is not None \
            else "in memory"
        tokens = f"<div>token_probs of {escape(', '.join(map(repr, self.meta['tokens'])))}</div>" \
            if self.meta.get("tokens") else ""
        return (f"<div style='border:1px solid #d0d7de;border-radius:6px;padding:8px 12px;max-width:760px;"
                f"font-family:sans-serif;font-size:13px'><div><b>Extraction</b>: {self.n_prompts} prompts, "
                f"<b>{escape(str(model))}</b>, layers {escape(_layer_list(self.layers))}, backend "
                f"{escape(str(self.meta.get('backend', 'hf')))}</div>"
                f"<table style='border-collapse:collapse;margin:4px 0'><tr><th align=left>array</th>"
                f"<th align=left>dtype</th><th align=left>shape</th></tr>{rows}</table>{tokens}<div>{where}</div></div>")


def resolve_token_ids(tokenizer, tokens: Sequence[str]) -> list[int]:
    """Each named token must be exactly one token of this tokenizer (no special tokens added)."""
    ids = []
    for token in tokens:
        encoded = tokenizer.encode(token, add_special_tokens=False)
        if len(encoded) != 1:
            raise ConfigError(f"token {token!r} is {len(encoded)} tokens under this model's tokenizer "
                              f"({encoded}); name single tokens (a leading space often matters)")
        ids.append(encoded[0])
    return ids


def tokenize(tokenizer, prompts: Sequence[Prompt], max_tokens: int | None) -> list[list[int]]:
    """Each prompt with the tokenizer's default special tokens (a BOS where its post-processor adds
    one), keeping the last max_tokens. A leading BOS stays: a longer prompt keeps its BOS and its
    last max_tokens - 1 tokens (with max_tokens 1, only the last token), since a model trained
    with a BOS reads its first position as an attention sink."""
    texts = [p.text for p in prompts]
    try:  # one call for the whole list: a fast tokenizer encodes it in a batch (no padding, same ids)
        encoded = [list(ids) for ids in tokenizer(texts)["input_ids"]] if texts else []
    except (TypeError, ValueError, AttributeError):  # a tokenizer that takes one text at a time
        encoded = None
    if encoded is None or len(encoded) != len(texts):
        encoded = [tokenizer(text)["input_ids"] for text in texts]
    if max_tokens is not None:
        bos = getattr(tokenizer, "bos_token_id", None)
        encoded = [ids if len(ids) <= max_tokens else
                   [ids[0], *ids[len(ids) - max_tokens + 1:]] if bos is not None and ids[0] == bos and max_tokens > 1
                   else ids[-max_tokens:] for ids in encoded]
    return encoded


def as_prompts(prompts: str | Prompt | Iterable[str | Prompt]) -> list[Prompt]:
    """Prompts from a string, a Prompt, or an iterable of either. A string at position i becomes
    Prompt(id=f"prompt-{i}", text=the string); a Prompt keeps its id."""
    items = [prompts] if isinstance(prompts, (str, Prompt)) else list(prompts)
    given = {item.id for item in items if isinstance(item, Prompt)}
    out = []
    for i, item in enumerate(items):
        if isinstance(item, str):
            item = Prompt(id=f"prompt-{i}", text=item)
            if item.id in given:
                raise ConfigError(f"extract: string {i} would get the id '{item.id}', which a Prompt in the same list "
                                  "already has: give every prompt as a Prompt with its own id")
        elif not isinstance(item, Prompt):
            raise ConfigError(f"extract: prompt {i} is of type {type(item).__name__}; give strings or "
                              "geomprobe.prompts.Prompt objects")
        out.append(item)
    return out


def unknown_token_id(tokenizer) -> int | None:
    """The id of the tokenizer's unknown token, or None when it has none, or when that id is also its
    BOS, EOS or padding token (GPT-2 and GPT-NeoX call <|endoftext|> all four; their byte-level BPE
    never produces an unknown token, and a BOS it adds is not one)."""
    unk = getattr(tokenizer, "unk_token_id", None)
    others = {getattr(tokenizer, name, None) for name in ("bos_token_id", "eos_token_id", "pad_token_id")}
    return None if unk is None or unk in others else int(unk)


def unknown_words(tokenizer, text: str) -> list[str]:
    """The pieces of `text` that the tokenizer writes as its unknown token (by character offsets where
    the tokenizer gives them, else the unknown token's own string), in order."""
    unk = unknown_token_id(tokenizer)
    if unk is None:
        return []
    try:
        encoded = tokenizer(text, return_offsets_mapping=True)
        spans = [text[a:b] or str(tokenizer.unk_token) for t, (a, b) in zip(encoded["input_ids"],
                                                                            encoded["offset_mapping"]) if t == unk]
    except (NotImplementedError, KeyError, TypeError, ValueError):  # a slow tokenizer has no offsets
        spans = [str(tokenizer.unk_token)] * tokenizer(text)["input_ids"].count(unk)
    return spans


def pad_batch(sequences: Sequence[Sequence[int]], pad_id: int):
    """Right-pad: (input_ids int64 [batch, T], attention_mask int64 [batch, T], final_index [batch])."""
    import torch

    width = max(len(s) for s in sequences)
    input_ids = torch.full((len(sequences), width), pad_id, dtype=torch.long)
    attention_mask = torch.zeros((len(sequences), width), dtype=torch.long)
    for row, seq in enumerate(sequences):
        input_ids[row, : len(seq)] = torch.tensor(seq, dtype=torch.long)
        attention_mask[row, : len(seq)] = 1
    final_index = torch.tensor([len(s) - 1 for s in sequences], dtype=torch.long)
    return input_ids, attention_mask, final_index


def _pad_id(tokenizer) -> int:
    for name in ("pad_token_id", "eos_token_id", "unk_token_id"):
        value = getattr(tokenizer, name, None)
        if value is not None:
            return value
    return 0


def make_backend(loaded, config: ExtractionConfig, layers: list[int], token_ids: list[int]):
    if config.backend == "hf":
        from geomprobe.backends.hf import HFBackend

        return HFBackend(loaded, layers, config.readouts, token_ids)
    if config.backend == "tl":
        from geomprobe.backends.tl import TLBackend

        return TLBackend(loaded, layers, config.readouts, token_ids)
    raise ConfigError(f"unknown backend '{config.backend}': choose one of {', '.join(BACKENDS)}")


# Per-layer arrays [batch, n_layers, ...] in the order a layer computes them: the value projection,
# the attention row, the head mix, the block output, and (at the last layer) the final norm's output.
_PER_LAYER = ("values", "attn_entropy_bits", "z", "resid", "hidden")
_NEXT_TOKEN = ("next_entropy_bits", "token_probs")  # from the next-token logits, after the last layer
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


class _Encoded:
    """Token ids of many prompts, tokenized `chunk` prompts at a time into flat int32 arrays (4 bytes a
    token rather than a Python list of ints; 100,000 prompts of ~20 tokens hold 9 MB)."""

    def __init__(self, tokenizer, prompts: Sequence[Prompt], max_tokens: int | None, chunk: int = 1024):
        self.chunk = chunk
        self.ids: list[np.ndarray] = []
        self.offsets: list[np.ndarray] = []
        self.lengths = np.zeros(len(prompts), dtype=np.int64)
        for start in range(0, len(prompts), chunk):
            part = tokenize(tokenizer, prompts[start: start + chunk], max_tokens)
            lengths = np.array([len(ids) for ids in part], dtype=np.int64)
            self.lengths[start: start + len(part)] = lengths
            self.ids.append(np.fromiter((t for ids in part for t in ids), dtype=np.int32, count=int(lengths.sum())))
            self.offsets.append(np.concatenate([[0], np.cumsum(lengths)]))

    def __len__(self) -> int:
        return len(self.lengths)

    def count(self, token_id: int) -> np.ndarray:
        """int64 [n_prompts]: how often `token_id` occurs in each prompt's (kept) tokens."""
        counts = [np.diff(np.concatenate([[0], np.cumsum(ids == token_id)])[offsets]) for ids, offsets in
                  zip(self.ids, self.offsets)]
        return np.concatenate(counts) if counts else np.zeros(0, dtype=np.int64)

    def __getitem__(self, index: int) -> list[int]:
        part, row = divmod(index, self.chunk)
        offsets = self.offsets[part]
        return self.ids[part][offsets[row]: offsets[row + 1]].tolist()


def _prompts_sha256(prompts: Sequence[Prompt]) -> str:
    return prompts_hash(prompts)  # streamed: no list of dicts, no whole JSON text


def _replacing(path: Path):
    from geomprobe.rundir import atomic_writer

    return atomic_writer(path)


def _write_prompts(prompts: Sequence[Prompt], path: Path) -> None:
    """geomprobe.prompts.write_prompts (the same bytes, atomically), streamed to the file line by line."""
    with _replacing(path) as handle:
        for prompt in prompts:
            handle.write((json.dumps(prompt.to_dict()) + "\n").encode("utf-8"))


def _save_npy(path: Path, array: np.ndarray) -> None:
    """np.save straight to a temporary file beside `path`, then os.replace (no in-memory copy)."""
    with _replacing(path) as handle:
        np.save(handle, array)


class _MemorySink:
    """Rows written into arrays allocated on the first batch (no out_dir)."""

    def __init__(self, n: int):
        self.n, self.arrays = n, {}
        self.done = np.zeros(n, dtype=bool)

    def add(self, batch: list[int], result: dict[str, np.ndarray]) -> None:
        for name, value in result.items():
            if name not in self.arrays:
                self.arrays[name] = np.empty((self.n, *value.shape[1:]), dtype=value.dtype)
            self.arrays[name][batch] = value
        self.done[batch] = True

    def finish(self) -> dict[str, np.ndarray]:
        return {name: self.arrays[name] for name in sorted(self.arrays)}


def _read_shard(path: Path, n: int) -> tuple[np.ndarray, dict[str, tuple]]:
    """A shard's prompt indices and {name: (dtype, row shape)}, reading every array in full (a truncated or
    damaged shard raises here, not at assembly)."""
    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files}
    index = arrays.pop("prompt_index")
    if index.ndim != 1 or index.size == 0 or index.min() < 0 or index.max() >= n:
        raise ValueError("prompt_index out of range")
    if any(value.shape[:1] != index.shape for value in arrays.values()):
        raise ValueError("arrays of another length than prompt_index")
    return index, {name: (value.dtype, value.shape[1:]) for name, value in arrays.items()}


class _ShardSink:
    """Each batch written as a shard right away; the final arrays assembled from the shards on disk,
    one shard at a time, so memory does not grow with the number of prompts."""

    def __init__(self, out_dir: Path, n: int, request: dict):
        self.out_dir, self.n = out_dir, n
        self.shard_dir = out_dir / "shards"
        self.done = np.zeros(n, dtype=bool)
        self.shards: list[str] = []  # file names in shard_dir
        self.specs: dict[str, tuple] | None = None
        request_path = out_dir / "request.json"
        if request_path.exists() and json.loads(request_path.read_text()) != json.loads(json.dumps(request)):
            shutil.rmtree(self.shard_dir, ignore_errors=True)  # shards of other prompts or settings: start afresh
        (out_dir / "meta.json").unlink(missing_ok=True)  # an extraction of other prompts or settings
        self.shard_dir.mkdir(parents=True, exist_ok=True)
        atomic_write_json(request_path, request)
        for shard in sorted(self.shard_dir.glob("shard-*.npz")):
            try:
                index, specs = _read_shard(shard, n)
                if self.specs is not None and specs != self.specs:
                    raise ValueError("arrays unlike the other shards'")
            except Exception as err:  # noqa: BLE001 - any unreadable shard is recomputed
                warnings.warn(f"extraction: shard {shard} cannot be read ({type(err).__name__}: {err}); "
                              "deleted, its prompts are recomputed", stacklevel=3)
                shard.unlink(missing_ok=True)
                continue
            self.specs = specs
            self.shards.append(shard.name)
            self.done[index] = True

    def add(self, batch: list[int], result: dict[str, np.ndarray]) -> None:
        shard = self.shard_dir / f"shard-{batch[0]:06d}.npz"
        atomic_save_npz(shard, prompt_index=np.array(batch), **result)
        if self.specs is None:
            self.specs = {name: (value.dtype, value.shape[1:]) for name, value in result.items()}
        self.shards.append(shard.name)
        self.done[batch] = True

    def finish(self) -> dict[str, np.ndarray]:
        """Write <name>.npy for every array, atomically (a temporary file in out_dir, then os.replace),
        row by row from the shards, read one at a time: nothing of size n_prompts is held in memory."""
        outputs: dict[str, list] = {}  # name -> [fd, temporary path, data offset, bytes a row]
        try:
            for name in sorted(self.specs or {}):
                dtype, row_shape = self.specs[name]
                fd, tmp = tempfile.mkstemp(prefix=f".{name}.npy.", dir=self.out_dir)
                outputs[name] = [fd, tmp, 0, 0]
                os.fchmod(fd, FILE_MODE)  # mkstemp makes 0600
                header = io.BytesIO()
                np.lib.format.write_array_header_1_0(header, {"descr": np.lib.format.dtype_to_descr(dtype),
                                                              "fortran_order": False, "shape": (self.n, *row_shape)})
                offset, row_bytes = len(header.getvalue()), int(np.prod(row_shape, dtype=np.int64)) * dtype.itemsize
                os.pwrite(fd, header.getvalue(), 0)
                os.ftruncate(fd, offset + self.n * row_bytes)
                outputs[name][2:] = [offset, row_bytes]
            written = np.zeros(self.n, dtype=bool)
            for shard in self.shards:
                with np.load(self.shard_dir / shard) as data:
                    index = data["prompt_index"]
                    for name, (fd, _, offset, row_bytes) in outputs.items():
                        rows = np.ascontiguousarray(data[name])
                        for row, i in enumerate(index.tolist()):
                            os.pwrite(fd, rows[row].tobytes(), offset + i * row_bytes)
                written[index] = True
            if not written.all():
                raise RuntimeError(f"extraction: {int((~written).sum())} prompts are in no shard of {self.shard_dir}")
            for name, output in outputs.items():
                os.fsync(output[0])
                os.close(output[0])
                output[0] = -1
                os.replace(output[1], self.out_dir / f"{name}.npy")
                output[1] = None
        except OSError as error:
            friendly = disk_error(error, self.out_dir)
            if friendly is not None:
                raise friendly from None
            raise
        finally:
            for fd, tmp, _, _ in outputs.values():
                if fd >= 0:
                    os.close(fd)
                if tmp is not None:  # not replaced onto its <name>.npy
                    Path(tmp).unlink(missing_ok=True)
        return {}


def extract(loaded, prompts: str | Prompt | Iterable[str | Prompt], config: ExtractionConfig | None = None,
            out_dir: str | Path | None = None, progress: bool = True,
            batch_context: Callable | None = None, label: str | None = None, *, tokenizer=None) -> Extraction:
    """Run extraction over `prompts` with a LoadedModel, or with a model object you hold (a
    transformers model with `tokenizer=`, a TransformerLens bridge, an nnsight LanguageModel:
    geomprobe.models.borrowed), which is put back as it was when extraction ends. With `out_dir` (usually <run>/extraction),
    finished batches are kept as shards and a rerun resumes; the final arrays are written there and
    returned memory-mapped (read-only np.memmap), so memory does not grow with the number of prompts.
    Without out_dir they are ordinary in-memory arrays.

        ex = extract(loaded, ["The cat sat on the", "Two plus two is"])
        ex.values.shape       # (2, n_layers, n_kv_heads, d_head); ex.layer(3)["values"]: model layer 3

    prompts: strings (a string at position i gets the id "prompt-{i}"), geomprobe.prompts.Prompt
    objects, or a mix. Prompts whose tokens include the tokenizer's unknown token (a word a
    word-level vocabulary such as a wind tunnel's lacks) are extracted, with one warning that counts
    them: they read every unknown word as the same token.

    progress: report on stderr (a live bar on a terminal, a plain line every ~10% of the batches
    otherwise), labelled `label` (default: the model spec).
    batch_context: optional function final_index (int64 [batch], positions of each row's last token)
    -> context manager; each batch's forward pass runs inside it. The ablation suite enters
    `edit_values` there, since a final-token edit needs the batch's final positions. Edited passes
    are not resumable shards, so it cannot be combined with out_dir.

    Raises NumericalError (naming the prompt and the first layer) if any array holds NaN or inf."""
    from geomprobe.models.loading import LoadedModel

    if not isinstance(loaded, LoadedModel):
        from geomprobe.models.borrowed import borrow

        with borrow(loaded, tokenizer) as held:
            return extract(held, prompts, config, out_dir, progress, batch_context, label)
    if tokenizer is not None:
        raise ConfigError("extract: tokenizer= goes with a model object; a LoadedModel brings its own")
    config = config or ExtractionConfig()
    if batch_context is not None and out_dir is not None:
        raise ValueError("extract: batch_context edits the forward pass, so its results cannot be kept as "
                         "resumable shards; call it without out_dir")
    layers = _checked_layers(loaded, config)
    token_ids = resolve_token_ids(loaded.tokenizer, config.tokens)
    prompts = as_prompts(prompts)
    encoded = _Encoded(loaded.tokenizer, prompts, config.max_tokens)
    lengths = encoded.lengths
    _warn_unknown_tokens(loaded, prompts, encoded)
    _check_lengths(loaded, prompts, lengths)
    sha256 = _prompts_sha256(prompts)

    identity = _identity(loaded)
    copy_key = None  # an untrained copy's extraction, kept across runs (geomprobe.copycache)
    if out_dir is not None:
        out_dir = Path(out_dir)
        finished = _reopen(out_dir, prompts, config, sha256, identity)
        if finished is not None:
            return finished
        from geomprobe import copycache

        settings = {name: value for name, value in config.fingerprint_fields().items() if name != "layers"}
        copy_key = copycache.key_of(loaded, {"prompts_sha256": sha256, "layers": layers, "token_ids": token_ids,
                                             "batch_size": config.batch_size, **settings})
        if copy_key is not None and copycache.restore(copy_key, out_dir, identity, loaded.spec):
            finished = _finished(out_dir, prompts, config, sha256, identity)
            if finished is not None:
                if progress:
                    print(f"{label or loaded.spec}: {len(prompts)} prompts from the copy cache "
                          f"({copycache.root()})", file=sys.stderr, flush=True)
                return finished
        request = {"prompts_sha256": sha256, "layers": layers, "model_identity": identity,
                   **config.fingerprint_fields()}
        sink = _ShardSink(out_dir, len(prompts), request)
    else:
        sink = _MemorySink(len(prompts))

    batches, n_batches = _batches(sink.done, lengths, config.batch_size)
    backend = make_backend(loaded, config, layers, token_ids) if n_batches else None
    module = getattr(backend, "bridge", None)  # the tl backend runs its own copy of the model
    pad_id = _pad_id(loaded.tokenizer)

    report = ProgressReport(progress, label or loaded.spec, len(prompts), int(sink.done.sum()), n_batches)
    with report:
        for batch in batches:
            input_ids, attention_mask, final_index = pad_batch([encoded[i] for i in batch], pad_id)
            with batch_context(final_index) if batch_context is not None else contextlib.nullcontext():
                result = backend.run_batch(input_ids, attention_mask, final_index)
            _check_finite(result, [prompts[i].id for i in batch], loaded, layers, module, index=batch)
            sink.add(batch, result)
            del result
            allocator.release()  # the batch's activations back to the system: the peak stays one batch's
            report.advance(len(batch))

    arrays = sink.finish()
    n_tokens = lengths.astype(np.int32)
    shapes = _shapes(sink, arrays, len(prompts), n_tokens)
    meta = _meta(loaded, config, len(prompts), layers, token_ids, sha256, shapes)
    meta["model_identity"] = identity  # a finished extraction is reused for this model only
    if out_dir is None:
        arrays["n_tokens"] = n_tokens
        return Extraction([p.id for p in prompts], layers, arrays, token_ids, meta)
    _save_outputs(out_dir, prompts, n_tokens, shapes, meta, sink.shard_dir)
    if copy_key is not None:
        from geomprobe import copycache

        copycache.store(copy_key, out_dir)
    return load_extraction(out_dir, prompt_ids=[p.id for p in prompts])


def _batches(done: np.ndarray, lengths: np.ndarray, batch_size: int) -> tuple[Iterable[list[int]], int]:
    """The prompts not done, longest first, in batches of prompt indices; and how many batches."""
    remaining = np.flatnonzero(~done)
    order = remaining[np.argsort(-lengths[remaining], kind="stable")]
    batches = (order[i: i + batch_size].tolist() for i in range(0, len(order), batch_size))
    return batches, -(-len(order) // batch_size)


def _shapes(sink: _MemorySink | _ShardSink, arrays: dict[str, np.ndarray], n_prompts: int,
            n_tokens: np.ndarray) -> dict[str, list[int]]:
    """The shape of every array of the extraction, n_tokens included."""
    shapes = {name: [n_prompts, *spec[1]] for name, spec in (sink.specs or {}).items()} \
        if isinstance(sink, _ShardSink) else {name: list(array.shape) for name, array in arrays.items()}
    shapes["n_tokens"] = list(n_tokens.shape)
    return shapes


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


def _identity(loaded) -> dict:
    """geomprobe.rundir.model_identity of the model, computed once per loaded model (it hashes files)."""
    from geomprobe.rundir import model_identity

    cached = getattr(loaded, "_extraction_identity", None)
    if cached is None:
        cached = json.loads(json.dumps(model_identity(loaded), default=str))
        try:
            loaded._extraction_identity = cached
        except AttributeError:  # a frozen stand-in: compute it each time
            pass
    return cached


def _reopen(out_dir: Path, prompts: Sequence[Prompt], config: ExtractionConfig, sha256: str,
            identity: dict | None = None) -> Extraction | None:
    """Remove what an interruption left in out_dir; the finished extraction of these prompts there, or None."""
    if out_dir.is_dir():  # left by a process killed mid-write (one writer at a time: geomprobe.locks)
        remove_temporaries(out_dir)
    if (out_dir / "meta.json").exists():  # a finished extraction: any shards beside it are orphans
        shutil.rmtree(out_dir / "shards", ignore_errors=True)
    return _finished(out_dir, prompts, config, sha256, identity)


def _meta(loaded, config: ExtractionConfig, n_prompts: int, layers: list[int], token_ids: list[int], sha256: str,
          shapes: dict) -> dict:
    """meta.json of an extraction."""
    adapter = loaded.adapter
    return {
        "model": loaded.spec,
        "n_prompts": n_prompts,
        "layers": layers,
        "readouts": list(config.readouts),
        "tokens": config.tokens,
        "token_ids": token_ids,
        "backend": config.backend,
        "shape": adapter.shape.__dict__,
        "family": adapter.family,
        "prompts_sha256": sha256,
        "max_tokens": config.max_tokens,
        "padding": "right",
        "final_token": "last non-padding token",
        "units": {"attn_entropy_bits": "bits", "next_entropy_bits": "bits", "values": "raw v = W_V x + b_V",
                  "resid": "block output, before any final norm",
                  "hidden": "hidden_states[l + 1]: block output; the last layer after the final norm"},
        "shapes": dict(sorted(shapes.items())),
    }


def _save_outputs(out_dir: Path, prompts: Sequence[Prompt], n_tokens: np.ndarray, shapes: dict, meta: dict,
                  shard_dir: Path) -> None:
    """Write n_tokens, the prompts and meta.json (last: it marks completion) beside the assembled arrays."""
    _save_npy(out_dir / "n_tokens.npy", n_tokens)
    for stale in out_dir.glob("*.npy"):  # arrays of an earlier extraction with other readouts
        if stale.stem not in shapes:
            stale.unlink(missing_ok=True)
    _write_prompts(prompts, out_dir / "prompts.jsonl")
    if out_dir.name == "extraction":  # <run>/extraction or <run>/<suite>/extraction: the prompts used there
        _write_prompts(prompts, out_dir.parent / "prompts.jsonl")
    atomic_write_json(out_dir / "meta.json", meta)  # written last: its presence marks completion
    shutil.rmtree(shard_dir, ignore_errors=True)


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


def _finished(out_dir: Path, prompts: Sequence[Prompt], config: ExtractionConfig,
              sha256: str | None = None, identity: dict | None = None) -> Extraction | None:
    """A completed extraction of the same model, prompts and settings in out_dir, or None."""
    meta_path = out_dir / "meta.json"
    if not meta_path.exists():
        return None
    meta = json.loads(meta_path.read_text())
    same = (meta.get("prompts_sha256") == (sha256 or _prompts_sha256(prompts))
            and meta.get("readouts") == list(config.readouts)
            and meta.get("tokens") == list(config.tokens) and meta.get("backend") == config.backend
            and meta.get("max_tokens") == config.max_tokens
            and (config.layers is None or meta.get("layers") == list(config.layers))
            and (identity is None or meta.get("model_identity") == identity))
    if not same:
        return None
    try:
        return load_extraction(out_dir, prompt_ids=[p.id for p in prompts])
    except RunDirectoryError as error:  # a damaged finished extraction is computed again, never reused
        what = str(error).split(": the extraction is damaged")[0]
        warnings.warn(f"{what}: the extraction is damaged; computing it again", stacklevel=3)
        return None


def load_extraction(directory: str | Path, prompt_ids: list[str] | None = None) -> Extraction:
    """The Extraction that a finished extract(..., out_dir=directory) wrote, arrays memory-mapped
    read-only (np.memmap: an array is read from disk as it is used).

    directory: an extraction directory, one holding meta.json and <array>.npy files: <run>/extraction
    (the extract suite), <run>/geometry/extraction, <run>/sula/extraction-<condition>, ...
    prompt_ids: the prompts' ids when the caller has them; otherwise read from the prompts.jsonl
    beside the arrays (or in the directory above).

        ex = load_extraction("runs/pythia-410m/extraction")
        ex                        # prompts, layers, arrays with their shapes, where they live
        ex.layer(12)["values"]    # float32 [n_prompts, n_kv_heads, d_head] at model layer 12

    Raises RunDirectoryError (one line) when `directory` holds no finished extraction."""
    directory = Path(directory)
    if not (directory / "meta.json").is_file():
        found = sorted(str(p.parent) for p in directory.glob("**/extraction*/meta.json"))[:3] if directory.is_dir() \
            else []
        hint = f": extraction directories below it: {', '.join(found)}" if found else \
            " (extract(..., out_dir=...) writes one; <run>/extraction is the extract suite's)"
        raise RunDirectoryError(f"{directory} holds no finished extraction (no meta.json){hint}")
    meta = json.loads((directory / "meta.json").read_text())
    names = list(meta["shapes"]) if "shapes" in meta else [path.stem for path in sorted(directory.glob("*.npy"))]
    arrays = {}
    for name in names:
        path = directory / f"{name}.npy"
        try:
            arrays[name] = np.load(path, mmap_mode="r")
        except (OSError, ValueError) as error:
            why = str(error).splitlines()[0] if str(error) else "damaged"
            raise RunDirectoryError(f"{path} cannot be read ({why}): the extraction is damaged; rerun with "
                                    "--overwrite") from None
        shape = (meta.get("shapes") or {}).get(name)
        if shape is not None and list(arrays[name].shape) != list(shape):
            raise RunDirectoryError(f"{path} holds shape {list(arrays[name].shape)}, not {list(shape)} as meta.json "
                                    "says: the extraction is damaged; rerun with --overwrite")
    if prompt_ids is None:
        from geomprobe.prompts import read_prompts

        own = directory / "prompts.jsonl"
        prompt_ids = [p.id for p in read_prompts(own if own.exists() else directory.parent / "prompts.jsonl")]
    return Extraction(list(prompt_ids), meta["layers"], arrays, meta["token_ids"], meta, directory=directory)
