"""What an extraction holds: the Extraction (arrays in prompt order, memory-mapped from disk or in
memory, and what they came from), the ExtractionConfig that determines it, and the names of the
readouts and arrays. The objects a user holds, apart from the code that fills them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from geomprobe.errors import ConfigError

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
        """The fields that decide what an extraction holds (layers, readouts, tokens, backend,
        max_tokens): a run directory resumes an extraction only when they match."""
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
_NEXT_TOKEN = ("next_entropy_bits", "token_probs")  # from the next-token logits, after the last layer
# each array's dimensions by name (Extraction.to_xarray)
_DIMS = {"values": ("prompt", "layer", "kv_head", "d_head"), "attn_entropy_bits": ("prompt", "layer", "head"),
         "n_visible_keys": ("prompt", "layer"), "z": ("prompt", "layer", "head", "d_head"),
         "resid": ("prompt", "layer", "d_model"), "hidden": ("prompt", "layer", "d_model"),
         "next_entropy_bits": ("prompt",), "token_probs": ("prompt", "token"), "n_tokens": ("prompt",)}


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
    """Arrays in prompt order (see the geomprobe.extraction docstring) and what they came from. From an extraction with an
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
        """How many prompts were extracted (the arrays' first axis)."""
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

    def to_xarray(self):
        """The arrays as one xarray.Dataset with named dimensions and coordinates: prompt (the prompt
        ids), layer (the model layers extracted), kv_head, head, d_head, d_model and token (the named
        tokens), memory-mapped arrays left on disk until read (xarray is optional: pip install
        xarray, or the `notebook` extra). The meta (model, backend, ...) is in the attrs, as JSON."""
        try:
            import xarray as xr
        except ImportError:
            raise ConfigError("Extraction.to_xarray needs xarray: pip install xarray (or 'geomprobe[notebook]')") \
                from None
        import json

        variables = {name: (_DIMS.get(name) or tuple(f"{name}_{i}" for i in range(self.arrays[name].ndim)),
                            self.arrays[name]) for name in self.arrays}
        coords = {"prompt": list(self.prompt_ids), "layer": list(self.layers)}
        if self.meta.get("tokens") and "token_probs" in self.arrays:
            coords["token"] = list(self.meta["tokens"])
        return xr.Dataset(variables, coords=coords,
                          attrs={"geomprobe_meta": json.dumps(self.meta, default=str),
                                 "directory": "" if self.directory is None else str(self.directory)})

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
