"""Untrained copies' extractions (and the ablation's per-copy results) kept across runs: a sweep
over checkpoints of one architecture pays for its copies once.

A fresh copy (geomprobe.nulls.fresh_copy) is determined by its architecture and config, how it was
built (legacy or drawn once), its seed, dtype, device type and attention implementation, never by
the trained weights of the model it copies. Its extraction is further determined by the tokenizer,
the prompts, the extraction settings and the versions of geomprobe, torch and transformers. That
key (key_of) names a folder under <cache>/copies/ (geomprobe.paths.cache_dir), which holds the
finished extraction's files and key.json. extract() restores a hit into the run's own folder (the
run directory stays self-contained) and stores what it computed for a copy. Work that is not an
extraction (the ablation's edited passes on a copy) keeps its per-copy result instead
(restore_result / store_result: result.json beside key.json, whose "what" names the work); the
results entry of a hit says `from_copy_cache`, and its intermediate arrays stay in the run that
computed it.

The cache is bounded: GEOMPROBE_COPY_CACHE_MB (default 4096; 0 turns it off) caps its size, and
the entries used longest ago are removed first. `geomprobe cache list` shows it, `geomprobe cache
clear` empties it (the converted real models beside it are left alone).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from pathlib import Path

from geomprobe.paths import cache_dir

LIMIT_ENV = "GEOMPROBE_COPY_CACHE_MB"
DEFAULT_LIMIT_MB = 4096
KEY_FILE = "key.json"
# config entries that name a checkpoint rather than describe the architecture
_NOT_ARCHITECTURE = ("_name_or_path", "name_or_path", "_commit_hash", "transformers_version")


def limit_bytes() -> int:
    text = os.environ.get(LIMIT_ENV, str(DEFAULT_LIMIT_MB)).strip()
    try:
        megabytes = float(text)
    except ValueError:
        from geomprobe.errors import ConfigError

        raise ConfigError(f"{LIMIT_ENV}={text!r}: give the copy cache's size in MB (0 turns it off)") from None
    return max(0, int(megabytes * 2**20))


def root() -> Path:
    return cache_dir() / "copies"


def copy_identity(model, seed: int, build: str, dtype: str, device: str, attn_implementation: str) -> dict:
    """What determines a fresh copy's weights: its class and architecture config (checkpoint
    names removed), build, seed, dtype, device type and attention implementation."""
    config = model.config.to_dict()
    for name in _NOT_ARCHITECTURE:
        config.pop(name, None)
    config_text = json.dumps(config, sort_keys=True, default=str)
    return {"class": type(model).__name__, "config_sha256": hashlib.sha256(config_text.encode()).hexdigest(),
            "build": build, "seed": int(seed), "dtype": dtype, "device": str(device).split(":")[0],
            "attn_implementation": attn_implementation}


def tokenizer_sha256(tokenizer) -> str:
    """A hash of the tokenizer's vocabulary, added tokens and pipeline (its serialised form where
    it has one): the same prompts give other token ids under another tokenizer."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None:
        text = backend.to_str()
    else:
        text = json.dumps(sorted(tokenizer.get_vocab().items()))
    return hashlib.sha256(text.encode()).hexdigest()


def key_of(loaded, request: dict) -> dict | None:
    """The cache key of an extraction by `loaded` (None: not a fresh copy, or the cache is off).
    request: the prompts' hash, resolved layers, token ids and extraction settings."""
    identity = getattr(loaded, "_copy_identity", None)
    if identity is None or limit_bytes() == 0:
        return None
    import torch
    import transformers

    import geomprobe

    return {"copy": identity, "tokenizer_sha256": tokenizer_sha256(loaded.tokenizer), **request,
            "versions": {"geomprobe": geomprobe.__version__, "torch": torch.__version__,
                         "transformers": transformers.__version__}}


def _folder(key: dict) -> Path:
    digest = hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()
    return root() / digest[:32]


def restore(key: dict, out_dir: Path, identity: dict, spec: str) -> bool:
    """Copy a cached extraction for `key` into out_dir (its meta recording this run's model spec
    and identity); False when there is none."""
    from geomprobe.errors import GeomprobeError
    from geomprobe.readers import read_data, read_extraction_meta
    from geomprobe.rundir import atomic_write_json, atomic_writer, make_dirs

    folder = _folder(key)
    try:
        stored = read_data(folder / KEY_FILE)
        meta = read_extraction_meta(folder / "meta.json")
    except GeomprobeError:  # missing or damaged: no hit (the entry is written again)
        return False
    if stored != json.loads(json.dumps(key, default=str)):
        return False
    make_dirs(out_dir)
    for path in folder.iterdir():
        if path.is_file() and not path.is_symlink() and path.name not in (KEY_FILE, "meta.json"):
            with path.open("rb") as source, atomic_writer(out_dir / path.name) as target:
                shutil.copyfileobj(source, target, 1 << 20)
    meta["model_identity"] = identity
    meta["model"] = spec
    meta["from_copy_cache"] = folder.name
    atomic_write_json(out_dir / "meta.json", meta)  # meta.json last: the folder is finished only with it
    os.utime(folder)  # used now: evicted last
    return True


def store(key: dict, out_dir: Path) -> None:
    """Keep the finished extraction in out_dir under `key`, then trim the cache to its limit."""
    limit = limit_bytes()
    files = [path for path in Path(out_dir).iterdir() if path.is_file()]
    size = sum(path.stat().st_size for path in files)
    if size > limit:
        return
    folder = _folder(key)
    staging = folder.with_name(folder.name + f".partial-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    for path in files:
        shutil.copyfile(path, staging / path.name)
    (staging / KEY_FILE).write_text(json.dumps(key, indent=1, default=str))
    shutil.rmtree(folder, ignore_errors=True)
    staging.replace(folder)
    trim(limit)


RESULT_FILE = "result.json"


def restore_result(key: dict | None) -> dict | None:
    """A copy's cached result for `key` (a suite's per-copy entry, for work that is not an
    extraction: the ablation's edited passes), or None."""
    if key is None:
        return None
    from geomprobe.errors import GeomprobeError
    from geomprobe.readers import read_data

    folder = _folder(key)
    try:
        stored = read_data(folder / KEY_FILE)
        result = read_data(folder / RESULT_FILE)
    except GeomprobeError:
        return None
    if stored != json.loads(json.dumps(key, default=str)) or not isinstance(result, dict):
        return None
    os.utime(folder)  # used now: evicted last
    return {**result, "from_copy_cache": folder.name}


def store_result(key: dict | None, result: dict) -> None:
    """Keep a copy's finished result under `key` (None: not a copy, or the cache is off)."""
    if key is None:
        return
    folder = _folder(key)
    staging = folder.with_name(folder.name + f".partial-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    (staging / RESULT_FILE).write_text(json.dumps(result, default=str))
    (staging / KEY_FILE).write_text(json.dumps(key, indent=1, default=str))
    shutil.rmtree(folder, ignore_errors=True)
    staging.replace(folder)
    trim(limit_bytes())


def entries() -> list[dict]:
    """Every cached copy extraction: folder, size, last use, and what it holds."""
    from geomprobe.errors import GeomprobeError
    from geomprobe.readers import read_data

    out = []
    if not root().is_dir():
        return out
    for folder in sorted(root().iterdir()):
        if not folder.is_dir() or ".partial-" in folder.name:
            continue
        try:
            key = read_data(folder / KEY_FILE)
        except GeomprobeError:
            key = {}
        key = key if isinstance(key, dict) else {}
        copy = key.get("copy") if isinstance(key.get("copy"), dict) else {}
        out.append({"folder": str(folder), "bytes": sum(p.stat().st_size for p in folder.iterdir() if p.is_file()),
                    "last_used": folder.stat().st_mtime, "class": copy.get("class"), "seed": copy.get("seed"),
                    "build": copy.get("build"), "prompts_sha256": key.get("prompts_sha256"),
                    "readouts": key.get("readouts"), "what": key.get("what", "extraction")})
    return out


def trim(limit: int | None = None) -> list[str]:
    """Remove the entries used longest ago until the cache fits `limit` bytes; the removed folders."""
    limit = limit_bytes() if limit is None else limit
    held = sorted(entries(), key=lambda entry: entry["last_used"])
    total = sum(entry["bytes"] for entry in held)
    removed = []
    while held and total > limit:
        entry = held.pop(0)
        shutil.rmtree(entry["folder"], ignore_errors=True)
        total -= entry["bytes"]
        removed.append(entry["folder"])
    return removed


def clear() -> tuple[int, int]:
    """Empty the copy cache: (entries removed, bytes freed). Only <cache>/copies is touched."""
    held = entries()
    for entry in held:
        shutil.rmtree(entry["folder"], ignore_errors=True)
    if root().is_dir():
        for leftover in root().iterdir():  # partial folders of interrupted stores
            if leftover.is_dir() and ".partial-" in leftover.name:
                shutil.rmtree(leftover, ignore_errors=True)
    return len(held), sum(entry["bytes"] for entry in held)


def describe_age(seconds_since_epoch: float) -> str:
    hours = (time.time() - seconds_since_epoch) / 3600
    return f"{hours:.1f} h ago" if hours < 48 else f"{hours / 24:.0f} days ago"
