"""One writer at a time: an exclusive advisory lock on a directory.

    with DirectoryLock(run_dir, what="run directory"):
        ...   # a second process gets RunDirectoryError naming this one's pid

The lock is `fcntl.flock` on `<dir>/.geomprobe.lock`, so the kernel drops it when the holder dies
(kill -9 included): a stale lock file never blocks a later run. The file holds the holder's pid
and command, for the error message; it is left in place (removing it would race with the next
holder). On systems without fcntl (Windows) the lock is a no-op, and says so once.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from geomprobe.errors import RunDirectoryError

LOCK_NAME = ".geomprobe.lock"

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None


class DirectoryLock:
    """Exclusive lock on `path` (created if missing). Re-entrant within one process: a lock already
    held by this process on the same directory is shared, and released by the outermost exit."""

    _held: dict[str, list] = {}  # resolved path -> [fd, depth]

    def __init__(self, path: str | Path, what: str = "directory"):
        self.path = Path(path)
        self.what = what

    @property
    def file(self) -> Path:
        return self.path / LOCK_NAME

    def acquire(self) -> None:
        key = str(self.path.resolve())
        if key in self._held:
            self._held[key][1] += 1
            return
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            if fcntl is None:  # pragma: no cover
                self._held[key] = [None, 1]
                return
            fd = os.open(self.file, os.O_RDWR | os.O_CREAT, 0o666)
        except OSError as error:
            raise RunDirectoryError(f"cannot create {self.file} ({error.strerror}): choose a {self.what} you can "
                                    "write to") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read(fd)
            os.close(fd)
            raise RunDirectoryError(f"{self.path} is in use by another geomprobe process ({holder}): wait for it "
                                    f"to finish, or use another --out") from None
        os.ftruncate(fd, 0)
        os.write(fd, f"pid {os.getpid()}: {' '.join([Path(sys.argv[0]).name, *sys.argv[1:]])[:300]}\n".encode())
        self._held[key] = [fd, 1]

    def release(self) -> None:
        key = str(self.path.resolve())
        entry = self._held.get(key)
        if entry is None:
            return
        entry[1] -= 1
        if entry[1] > 0:
            return
        del self._held[key]
        if entry[0] is not None:
            fcntl.flock(entry[0], fcntl.LOCK_UN)
            os.close(entry[0])

    def __enter__(self) -> DirectoryLock:
        self.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def _read(fd: int) -> str:
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        text = os.read(fd, 400).decode("utf-8", "replace").strip()
    except OSError:
        text = ""
    return text or "pid unknown"
