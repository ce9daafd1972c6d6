"""The extraction engine (PROTOCOL.md section 1): one forward pass per prompt, final-token slices.

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
interrupted run resumes where it stopped; the arrays above are assembled at the end.

Two backends produce the same arrays: "hf" (geomprobe's own hooks and attention function) and
"tl" (TransformerLens 4 TransformerBridge), see geomprobe.backends.
"""

from __future__ import annotations

import contextlib
import json
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from geomprobe.errors import ConfigError, NumericalError
from geomprobe.prompts import Prompt, prompts_hash, write_prompts
from geomprobe.rundir import atomic_save_npy, atomic_save_npz, atomic_write_json

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


@dataclass
class Extraction:
    """Arrays in prompt order (see module docstring) and what they came from."""

    prompt_ids: list[str]
    layers: list[int]
    arrays: dict[str, np.ndarray]
    token_ids: list[int]
    meta: dict

    def __getitem__(self, name: str) -> np.ndarray:
        return self.arrays[name]


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
    """Each prompt with the tokenizer's default special tokens, keeping the last max_tokens."""
    encoded = [tokenizer(p.text)["input_ids"] for p in prompts]
    if max_tokens is not None:
        encoded = [ids[-max_tokens:] for ids in encoded]
    return encoded


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


def _check_finite(batch: dict[str, np.ndarray], ids: Sequence[str], loaded) -> None:
    for name, array in batch.items():
        if array.dtype.kind == "f" and not np.isfinite(array).all():
            bad = np.argwhere(~np.isfinite(array.reshape(array.shape[0], -1)).all(axis=1))[0, 0]
            raise NumericalError(f"non-finite {name} for prompt '{ids[bad]}' (dtype {loaded.dtype}); "
                                 "try --dtype float32 or bfloat16")


def extract(loaded, prompts: Sequence[Prompt], config: ExtractionConfig | None = None,
            out_dir: str | Path | None = None, progress: bool = True,
            batch_context: Callable | None = None) -> Extraction:
    """Run extraction over `prompts` with a LoadedModel. With `out_dir` (usually <run>/extraction),
    finished batches are kept as shards and a rerun resumes; the final arrays are written there.

    batch_context: optional function final_index (int64 [batch], positions of each row's last token)
    -> context manager; each batch's forward pass runs inside it. The ablation suite enters
    `edit_values` there, since a final-token edit needs the batch's final positions. Edited passes
    are not resumable shards, so it cannot be combined with out_dir."""
    config = config or ExtractionConfig()
    if batch_context is not None and out_dir is not None:
        raise ValueError("extract: batch_context edits the forward pass, so its results cannot be kept as "
                         "resumable shards; call it without out_dir")
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
    token_ids = resolve_token_ids(loaded.tokenizer, config.tokens)
    prompts = list(prompts)
    encoded = tokenize(loaded.tokenizer, prompts, config.max_tokens)
    limit = getattr(loaded.model.config, "max_position_embeddings", None)
    if limit is not None and max(len(ids) for ids in encoded) > limit:
        longest = max(range(len(prompts)), key=lambda i: len(encoded[i]))
        raise ConfigError(f"prompt '{prompts[longest].id}' has {len(encoded[longest])} tokens, more than this model's "
                          f"{limit} positions: shorten it or pass --max-tokens {limit}")
    if any(len(ids) == 0 for ids in encoded):
        empty = next(p.id for p, ids in zip(prompts, encoded) if not ids)
        raise ConfigError(f"prompt '{empty}' has no tokens")

    shard_dir = None
    done: dict[int, dict[str, np.ndarray]] = {}
    if out_dir is not None:
        out_dir = Path(out_dir)
        finished = _finished(out_dir, prompts, config)
        if finished is not None:
            return finished
        shard_dir = out_dir / "shards"
        request = {"prompts_sha256": prompts_hash(prompts), "layers": layers, **config.fingerprint_fields()}
        request_path = out_dir / "request.json"
        if request_path.exists() and json.loads(request_path.read_text()) != json.loads(json.dumps(request)):
            shutil.rmtree(shard_dir, ignore_errors=True)  # shards of other prompts or settings: start afresh
            (out_dir / "meta.json").unlink(missing_ok=True)
        shard_dir.mkdir(parents=True, exist_ok=True)
        atomic_write_json(request_path, request)
        for shard in sorted(shard_dir.glob("shard-*.npz")):
            with np.load(shard) as data:
                arrays = {k: data[k] for k in data.files}
            for row, index in enumerate(arrays.pop("prompt_index")):
                done[int(index)] = {k: v[row] for k, v in arrays.items()}

    order = sorted((i for i in range(len(prompts)) if i not in done), key=lambda i: -len(encoded[i]))
    batches = [order[i: i + config.batch_size] for i in range(0, len(order), config.batch_size)]
    backend = make_backend(loaded, config, layers, token_ids) if batches else None
    pad_id = _pad_id(loaded.tokenizer)

    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns = [TextColumn("[bold]extract[/] {task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn(), TimeRemainingColumn()]
    with Progress(*columns, disable=not progress, transient=False) as bar:
        task = bar.add_task(loaded.spec, total=len(prompts), completed=len(done))
        for batch in batches:
            input_ids, attention_mask, final_index = pad_batch([encoded[i] for i in batch], pad_id)
            with batch_context(final_index) if batch_context is not None else contextlib.nullcontext():
                result = backend.run_batch(input_ids, attention_mask, final_index)
            _check_finite(result, [prompts[i].id for i in batch], loaded)
            if shard_dir is not None:
                atomic_save_npz(shard_dir / f"shard-{batch[0]:06d}.npz", prompt_index=np.array(batch), **result)
            for row, index in enumerate(batch):
                done[index] = {k: v[row] for k, v in result.items()}
            bar.advance(task, len(batch))

    names = sorted(done[0]) if done else []
    arrays = {name: np.stack([done[i][name] for i in range(len(prompts))]) for name in names}
    arrays["n_tokens"] = np.array([len(ids) for ids in encoded], dtype=np.int32)
    meta = {
        "n_prompts": len(prompts),
        "layers": layers,
        "readouts": list(config.readouts),
        "tokens": config.tokens,
        "token_ids": token_ids,
        "backend": config.backend,
        "shape": adapter.shape.__dict__,
        "family": adapter.family,
        "prompts_sha256": prompts_hash(prompts),
        "max_tokens": config.max_tokens,
        "padding": "right",
        "final_token": "last non-padding token",
        "units": {"attn_entropy_bits": "bits", "next_entropy_bits": "bits", "values": "raw v = W_V x + b_V",
                  "resid": "block output, before any final norm",
                  "hidden": "hidden_states[l + 1]: block output; the last layer after the final norm"},
        "shapes": {name: list(array.shape) for name, array in arrays.items()},
    }
    if out_dir is not None:
        for name, array in arrays.items():
            atomic_save_npy(out_dir / f"{name}.npy", array)
        write_prompts(prompts, out_dir / "prompts.jsonl")
        if out_dir.name == "extraction":  # <run>/extraction or <run>/<suite>/extraction: the prompts used there
            write_prompts(prompts, out_dir.parent / "prompts.jsonl")
        atomic_write_json(out_dir / "meta.json", meta)  # written last: its presence marks completion
        shutil.rmtree(shard_dir, ignore_errors=True)
    return Extraction([p.id for p in prompts], layers, arrays, token_ids, meta)


def _finished(out_dir: Path, prompts: Sequence[Prompt], config: ExtractionConfig) -> Extraction | None:
    """A completed extraction of the same prompts and settings in out_dir, or None."""
    meta_path = out_dir / "meta.json"
    if not meta_path.exists():
        return None
    meta = json.loads(meta_path.read_text())
    same = (meta.get("prompts_sha256") == prompts_hash(list(prompts)) and meta.get("readouts") == list(config.readouts)
            and meta.get("tokens") == list(config.tokens) and meta.get("backend") == config.backend
            and meta.get("max_tokens") == config.max_tokens
            and (config.layers is None or meta.get("layers") == list(config.layers)))
    return load_extraction(out_dir) if same else None


def load_extraction(directory: str | Path) -> Extraction:
    """Read the arrays a finished extraction wrote (<run>/extraction)."""
    directory = Path(directory)
    meta = json.loads((directory / "meta.json").read_text())
    arrays = {path.stem: np.load(path) for path in directory.glob("*.npy")}
    from geomprobe.prompts import read_prompts

    own = directory / "prompts.jsonl"
    ids = [p.id for p in read_prompts(own if own.exists() else directory.parent / "prompts.jsonl")]
    return Extraction(ids, meta["layers"], arrays, meta["token_ids"], meta)
