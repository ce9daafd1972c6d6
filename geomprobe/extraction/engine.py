"""extract(): the forward passes over prompts sorted by length and batched, through a backend ("hf"
or "tl"), each batch checked and handed to a sink, resuming from the shards a stopped run left. The
other modules of the package are what it calls.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np

from geomprobe import allocator
from geomprobe.console import ProgressReport
from geomprobe.errors import ConfigError
from geomprobe.prompts import Prompt

from .arrays import BACKENDS, Extraction, ExtractionConfig
from .checks import _check_finite, _check_lengths, _checked_layers, _warn_unknown_tokens
from .storage import (
    _finished,
    _identity,
    _MemorySink,
    _meta,
    _prompts_sha256,
    _reopen,
    _save_outputs,
    _shapes,
    _ShardSink,
    load_extraction,
)
from .tokens import _Encoded, _pad_id, as_prompts, pad_batch, resolve_token_ids


def make_backend(loaded, config: ExtractionConfig, layers: list[int], token_ids: list[int]):
    if config.backend == "hf":
        from geomprobe.backends.hf import HFBackend

        return HFBackend(loaded, layers, config.readouts, token_ids)
    if config.backend == "tl":
        from geomprobe.backends.tl import TLBackend

        return TLBackend(loaded, layers, config.readouts, token_ids)
    raise ConfigError(f"unknown backend '{config.backend}': choose one of {', '.join(BACKENDS)}")


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
    _save_outputs(out_dir, prompts, n_tokens, shapes, meta, sink.shard_dir, sink.files)
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
