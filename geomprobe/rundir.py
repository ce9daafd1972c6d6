"""Run directories: the unit of provenance (PROTOCOL.md section 10).

Every file is written atomically (temporary file in the same folder, then os.replace), so an
interrupted run leaves either the old file or the new one, never half of one. The manifest says
what produced the directory; its `fingerprint` decides whether a rerun may resume it.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import io
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from geomprobe.errors import RunDirectoryError

MANIFEST = "manifest.json"
PACKAGES = ("geomprobe", "torch", "transformers", "transformer_lens", "accelerate", "bitsandbytes", "numpy",
            "scipy", "scikit-learn", "tokenizers", "huggingface_hub")


def now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def atomic_write_bytes(path: Path, data: bytes) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: Path, obj) -> None:
    atomic_write_text(path, json.dumps(obj, indent=2, sort_keys=False, default=_json_default) + "\n")


def atomic_save_npy(path: Path, array: np.ndarray) -> None:
    buffer = io.BytesIO()
    np.save(buffer, array)
    atomic_write_bytes(path, buffer.getvalue())


def atomic_save_npz(path: Path, **arrays: np.ndarray) -> None:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    atomic_write_bytes(path, buffer.getvalue())


def _json_default(obj):
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def package_versions() -> dict[str, str | None]:
    from importlib import metadata

    versions: dict[str, str | None] = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def git_commit() -> str | None:
    """The commit of the geomprobe checkout this code runs from (with '-dirty' if modified)."""
    root = Path(__file__).resolve().parent.parent
    if not (root / ".git").exists():
        return None
    try:
        commit = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                                timeout=5).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return (commit + ("-dirty" if dirty else "")) or None


def fingerprint(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=_json_default).encode()).hexdigest()[:16]


class RunDirectory:
    """A results directory. `open()` creates it or checks that a rerun matches what is there."""

    def __init__(self, path: str | Path):
        self.path = Path(path)

    @property
    def manifest_path(self) -> Path:
        return self.path / MANIFEST

    def read_manifest(self) -> dict | None:
        if not self.manifest_path.exists():
            return None
        return json.loads(self.manifest_path.read_text())

    def open(self, config: dict, *, overwrite: bool = False, extra: dict | None = None) -> dict:
        """Start or resume a run with `config` (what determines its results). A directory made by
        a different config is refused unless overwrite=True."""
        print_fp = fingerprint(config)
        existing = self.read_manifest()
        if existing is not None and existing.get("fingerprint") != print_fp and not overwrite:
            changed = sorted(k for k in set(config) | set(existing.get("config", {}))
                             if config.get(k) != existing.get("config", {}).get(k))
            raise RunDirectoryError(f"{self.path} holds a run with a different configuration "
                                    f"(differs in: {', '.join(changed) or 'fingerprint'}); use another --out "
                                    "or pass --overwrite")
        if existing is not None and overwrite and existing.get("fingerprint") != print_fp:
            import shutil

            for child in self.path.iterdir():
                shutil.rmtree(child) if child.is_dir() else child.unlink()
            existing = None
        manifest = existing or {"created": now()}
        manifest.update({
            "fingerprint": print_fp,
            "config": config,
            "status": "running",
            "started": now(),
            "ended": None,
            "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]),
            "versions": package_versions(),
            "geomprobe_commit": git_commit(),
            **(extra or {}),
        })
        manifest.setdefault("suites", {})
        self.write_manifest(manifest)
        return manifest

    def write_manifest(self, manifest: dict) -> None:
        atomic_write_json(self.manifest_path, manifest)

    def update(self, **fields) -> dict:
        manifest = self.read_manifest() or {}
        manifest.update(fields)
        self.write_manifest(manifest)
        return manifest
