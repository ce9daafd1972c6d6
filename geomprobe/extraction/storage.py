"""Where a batch's rows go and what an extraction directory holds: an in-memory sink, or shards on
disk assembled into memory-mapped .npy files, with meta.json, prompts.jsonl and the model identity
that decide when a finished extraction is reused; load_extraction reads one back. The on-disk
format in one place, apart from the forward passes that produce it.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import tempfile
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from geomprobe.errors import RunDirectoryError
from geomprobe.integrity import CHUNK, HashingWriter, changed_line, matches, remember
from geomprobe.prompts import Prompt, prompts_hash
from geomprobe.rundir import (
    FILE_MODE,
    atomic_save_npz,
    atomic_write_json,
    disk_error,
    inside,
    make_dirs,
    refuse_folder,
    remove_path,
    remove_temporaries,
)

from .arrays import Extraction, ExtractionConfig


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


def _save_npy(path: Path, array: np.ndarray) -> dict:
    """np.save straight to a temporary file beside `path`, then os.replace (no in-memory copy);
    returns the file's record for meta.json ({"sha256", "bytes"}, hashed as it was written)."""
    with _replacing(path) as handle:
        writer = HashingWriter(handle)
        np.save(writer, array)
    remember(path, writer.digest.hexdigest())
    return writer.entry()


def _fd_entry(fd: int, size: int) -> dict:
    """{"sha256", "bytes"} of the first `size` bytes of an open file, read back 1 MiB at a time (the
    assembled arrays are written row by row out of order, so they are hashed once complete, from
    the page cache)."""
    digest, offset = hashlib.sha256(), 0
    while offset < size:
        chunk = os.pread(fd, min(CHUNK, size - offset), offset)
        if not chunk:
            raise OSError(f"short read at byte {offset} of {size}")
        digest.update(chunk)
        offset += len(chunk)
    return {"sha256": digest.hexdigest(), "bytes": size}


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
    from geomprobe.files import regular_file
    from geomprobe.readers import ARRAY

    with np.load(regular_file(path, ARRAY)) as data:  # np.load would block on a FIFO
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
        self.files: dict[str, dict] = {}  # <name>.npy -> {"sha256", "bytes"}, once finish() wrote it
        request_path = out_dir / "request.json"
        if _request_differs(request_path, request):
            remove_path(self.shard_dir)  # shards of other prompts or settings: start afresh
        remove_path(out_dir / "meta.json")  # an extraction of other prompts or settings
        make_dirs(self.shard_dir)
        atomic_write_json(request_path, request)
        for shard in sorted(self.shard_dir.glob("shard-*.npz")):
            try:
                index, specs = _read_shard(shard, n)
                if self.specs is not None and specs != self.specs:
                    raise ValueError("arrays unlike the other shards'")
            except Exception as err:  # noqa: BLE001 - any unreadable shard is recomputed
                warnings.warn(f"extraction: shard {shard} cannot be read ({type(err).__name__}: {err}); "
                              "deleted, its prompts are recomputed", stacklevel=3)
                remove_path(shard)
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
        for name in sorted(self.specs or {}):  # before any temporary: os.replace cannot put a file there
            refuse_folder(self.out_dir / f"{name}.npy")
        try:
            for name in sorted(self.specs or {}):
                dtype, row_shape = self.specs[name]
                fd, tmp = tempfile.mkstemp(prefix=f".{name}.npy.", dir=inside(self.out_dir / f"{name}.npy").parent)
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
                entry = _fd_entry(output[0], output[2] + self.n * output[3])
                os.fsync(output[0])
                os.close(output[0])
                output[0] = -1
                os.replace(output[1], self.out_dir / f"{name}.npy")
                output[1] = None
                remember(self.out_dir / f"{name}.npy", entry["sha256"])
                self.files[f"{name}.npy"] = entry
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


def _request_differs(path: Path, request: dict) -> bool:
    """Whether request.json exists and asks for another extraction than `request`; one that cannot be
    read (geomprobe.readers.read_extraction_request) counts as another: its shards are recomputed,
    with a warning line."""
    from geomprobe.readers import read_extraction_request

    if not path.exists() and not path.is_symlink():
        return False
    try:
        return read_extraction_request(path) != json.loads(json.dumps(request))
    except RunDirectoryError as error:
        warnings.warn(f"{_damage(error)}; its shards are computed again", stacklevel=4)
        return True


def _damage(error: RunDirectoryError) -> str:
    """A reader's one-line error without its fix: what is damaged, for a warning that says what
    happens instead."""
    text = str(error)
    for fix in (": the extraction is damaged", ": rerun the same command"):
        text = text.split(fix)[0]
    return text


def _shapes(sink: _MemorySink | _ShardSink, arrays: dict[str, np.ndarray], n_prompts: int,
            n_tokens: np.ndarray) -> dict[str, list[int]]:
    """The shape of every array of the extraction, n_tokens included."""
    shapes = {name: [n_prompts, *spec[1]] for name, spec in (sink.specs or {}).items()} \
        if isinstance(sink, _ShardSink) else {name: list(array.shape) for name, array in arrays.items()}
    shapes["n_tokens"] = list(n_tokens.shape)
    return shapes


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
        remove_path(out_dir / "shards")
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
                  shard_dir: Path, files: dict[str, dict] | None = None) -> None:
    """Write n_tokens, the prompts and meta.json (last: it marks completion) beside the assembled arrays;
    files: the assembled arrays' records ({"sha256", "bytes"} by file name), kept in meta.json's
    array_files with n_tokens.npy's, for readers to check the arrays against."""
    files = {**(files or {}), "n_tokens.npy": _save_npy(out_dir / "n_tokens.npy", n_tokens)}
    meta = {**meta, "array_files": dict(sorted(files.items()))}
    for stale in out_dir.glob("*.npy"):  # arrays of an earlier extraction with other readouts
        if stale.stem not in shapes:
            remove_path(stale)
    _write_prompts(prompts, out_dir / "prompts.jsonl")
    if out_dir.name == "extraction":  # <run>/extraction or <run>/<suite>/extraction: the prompts used there
        _write_prompts(prompts, out_dir.parent / "prompts.jsonl")
    atomic_write_json(out_dir / "meta.json", meta)  # written last: its presence marks completion
    remove_path(shard_dir)


def _finished(out_dir: Path, prompts: Sequence[Prompt], config: ExtractionConfig,
              sha256: str | None = None, identity: dict | None = None) -> Extraction | None:
    """A completed extraction of the same model, prompts and settings in out_dir, or None. A damaged
    one (meta.json or an array that cannot be read) is computed again, never reused, and so is one
    whose array file no longer matches the sha256 meta.json recorded: one warning line."""
    from geomprobe.readers import read_extraction_meta, read_extraction_request

    meta_path, request_path = out_dir / "meta.json", out_dir / "request.json"
    if not meta_path.exists() and not meta_path.is_symlink():
        return None
    try:
        meta = read_extraction_meta(meta_path)
        if request_path.exists() or request_path.is_symlink():
            read_extraction_request(request_path)
        same = (meta.get("prompts_sha256") == (sha256 or _prompts_sha256(prompts))
                and meta.get("readouts") == list(config.readouts)
                and meta.get("tokens") == list(config.tokens) and meta.get("backend") == config.backend
                and meta.get("max_tokens") == config.max_tokens
                and (config.layers is None or meta.get("layers") == list(config.layers))
                and (identity is None or meta.get("model_identity") == identity))
        if not same:
            return None
        extraction, changed = _read_extraction(out_dir, [p.id for p in prompts])
        if not changed:
            return extraction
        warnings.warn(changed_line(changed[0], "meta.json", "computing the extraction again"), stacklevel=3)
    except RunDirectoryError as error:  # a damaged finished extraction is computed again, never reused
        warnings.warn(f"{_damage(error)}: the extraction is damaged; computing it again", stacklevel=3)
    for path in (meta_path, request_path):  # meta.json marks it finished; request.json is written afresh
        remove_path(path)
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

    An array file that no longer holds what geomprobe wrote (its sha256 differs from the one meta.json
    recorded; an extraction written before geomprobe recorded them is not checked) is read as it is,
    with one warning line naming it. Raises RunDirectoryError (one line) when `directory` holds no
    finished extraction."""
    extraction, changed = _read_extraction(directory, prompt_ids)
    for path in changed:
        warnings.warn(changed_line(path, "meta.json", "its values are the edited ones; rerunning the command "
                                   "that wrote it computes them again"), stacklevel=2)
    return extraction


def _read_extraction(directory: str | Path, prompt_ids: list[str] | None) -> tuple[Extraction, list[Path]]:
    """load_extraction's Extraction, and the array files whose sha256 differs from meta.json's record
    (each file hashed once per process: geomprobe.integrity.file_sha256)."""
    directory = Path(directory)
    if not (directory / "meta.json").exists() and not (directory / "meta.json").is_symlink():  # a FIFO: its reader says
        found = sorted(str(p.parent) for p in directory.glob("**/extraction*/meta.json"))[:3] if directory.is_dir() \
            else []
        hint = f": extraction directories below it: {', '.join(found)}" if found else \
            " (extract(..., out_dir=...) writes one; <run>/extraction is the extract suite's)"
        raise RunDirectoryError(f"{directory} holds no finished extraction (no meta.json){hint}")
    from geomprobe.files import regular_file
    from geomprobe.readers import ARRAY, read_extraction_meta

    meta = read_extraction_meta(directory / "meta.json", "the extraction is damaged; rerun with --overwrite")
    names = list(meta["shapes"]) if meta.get("shapes") is not None else [path.stem for path in sorted(directory.glob("*.npy"))]
    arrays = {}
    for name in names:
        path = directory / f"{name}.npy"
        try:  # a regular file first: np.load would block on a FIFO, and map a device
            arrays[name] = np.load(regular_file(path, ARRAY), mmap_mode="r")
        except (OSError, ValueError, EOFError) as error:  # EOFError: an empty file
            why = "an empty file" if isinstance(error, EOFError) else \
                str(error).splitlines()[0] if str(error) else "damaged"
            raise RunDirectoryError(f"{path} cannot be read ({why}): the extraction is damaged; rerun with "
                                    "--overwrite") from None
        shape = (meta.get("shapes") or {}).get(name)
        if shape is not None and list(arrays[name].shape) != list(shape):
            raise RunDirectoryError(f"{path} holds shape {list(arrays[name].shape)}, not {list(shape)} as meta.json "
                                    "says: the extraction is damaged; rerun with --overwrite")
    records = meta.get("array_files") or {}
    changed = [directory / f"{name}.npy" for name in names
               if f"{name}.npy" in records and not matches(directory / f"{name}.npy", records[f"{name}.npy"])]
    if prompt_ids is None:
        from geomprobe.prompts import read_prompts

        own = directory / "prompts.jsonl"
        prompt_ids = [p.id for p in read_prompts(own if own.exists() else directory.parent / "prompts.jsonl")]
    return Extraction(list(prompt_ids), meta["layers"], arrays, meta["token_ids"], meta, directory=directory), changed
