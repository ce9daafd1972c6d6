"""Whether a file geomprobe wrote still holds what it wrote: the sha256 recorded as it was written
(a suite's results.json in the manifest's entry for the suite, an extraction's arrays in its
meta.json), checked when geomprobe reads the file back. A reader's schema catches a damaged file;
this catches a well-formed one whose numbers were edited.

    record = HashingWriter(handle)          # np.save(record, array): hashed as it is written
    record.entry()                          # {"sha256": "...", "bytes": 1234}, what meta.json keeps
    file_sha256(path)                       # hashed once per process per file (1 MiB at a time)
    matches(path, {"sha256": ..., "bytes": ...})

A file written by an older geomprobe has no recorded hash and is read unchecked.
Foundation layer: hashlib and os only.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

CHUNK = 1 << 20  # bytes read at a time when a file is hashed

# real path -> (what os.stat said when it was hashed, its sha256): a file is read once per process
# while it stays as it was (a rewrite changes its inode, size, mtime or ctime)
_hashed: dict[str, tuple[tuple, str]] = {}


def _stat_key(info: os.stat_result) -> tuple:
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns


def file_sha256(path: str | Path) -> str | None:
    """The sha256 (hex) of a regular file's bytes, None for anything else (missing, a folder, a
    FIFO: never opened here). Remembered for the process while the file's stat stays the same."""
    real = os.path.realpath(path)
    try:
        info = os.stat(real)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode):
        return None
    known = _hashed.get(real)
    if known is not None and known[0] == _stat_key(info):
        return known[1]
    digest = hashlib.sha256()
    with open(real, "rb") as handle:
        key = _stat_key(os.fstat(handle.fileno()))
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    _hashed[real] = (key, digest.hexdigest())
    return digest.hexdigest()


def remember(path: str | Path, sha256: str) -> None:
    """Note the sha256 of a file just written in its final place (after its rename), so that
    reading it back in this process does not hash it again."""
    real = os.path.realpath(path)
    try:
        _hashed[real] = (_stat_key(os.stat(real)), sha256)
    except OSError:
        pass


def matches(path: str | Path, recorded: dict) -> bool:
    """Whether the file holds what `recorded` ({"sha256", "bytes"}) says was written: its size
    first (no read when it differs), then its sha256."""
    size = recorded.get("bytes")
    if isinstance(size, int):
        try:
            if os.stat(path).st_size != size:
                return False
        except OSError:
            return False
    return file_sha256(path) == recorded.get("sha256")


class HashingWriter:
    """A binary handle's write() that hashes and counts the bytes on their way to the file (np.save
    and json text go through it), so a file's record costs no second read."""

    def __init__(self, handle):
        self.handle = handle
        self.digest = hashlib.sha256()
        self.bytes = 0

    def write(self, data) -> int:
        view = memoryview(data).cast("B")
        self.digest.update(view)
        self.bytes += view.nbytes
        return self.handle.write(data)

    def entry(self) -> dict:
        """{"sha256": hex, "bytes": n}: what was written so far."""
        return {"sha256": self.digest.hexdigest(), "bytes": self.bytes}


# what a read-only command adds to changed_line for a suite's results.json (the runner keeps it unsaid
# for the suites it is about to compute again: its own line says that)
SHOWN_AS_EDITED = "its numbers are the edited ones; rerunning the run's command computes them again"


def changed_line(path: str | Path, record: str, then: str) -> str:
    """The one line that says a file no longer holds what geomprobe wrote: `record` names the file
    that kept its sha256 (manifest.json, meta.json), `then` what happens now."""
    return f"{path} changed since geomprobe wrote it (sha256 differs from {record}): {then}"
