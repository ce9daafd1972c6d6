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
import stat
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
            # never through a link (it would truncate what it points at), never a FIFO or a device
            fd = os.open(self.file, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | os.O_NONBLOCK, 0o666)
        except OSError as error:
            if self.file.is_symlink():
                raise RunDirectoryError(f"{self.file} is a symbolic link: remove it (geomprobe makes its own lock "
                                        "file)") from None
            raise RunDirectoryError(f"cannot create {self.file} ({error.strerror}): choose a {self.what} you can "
                                    "write to") from None
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise RunDirectoryError(f"{self.file} is not a regular file: remove it (geomprobe makes its own lock file)")
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


def is_locked(path: str | Path) -> str | None:
    """Whether a geomprobe process holds the lock of directory `path`: its holder ("pid 1234:
    geomprobe run ...") or None (also when the directory or its lock file does not exist).

    On Linux the kernel's lock table (/proc/locks) is read, which takes no lock, so a probe never
    makes the holder's own acquire fail; elsewhere (or when the table cannot be matched to the
    file) a shared non-blocking flock is taken and released at once. Locks held on another machine
    of a network file system show only through the second way, where the file system supports it."""
    file = Path(path) / LOCK_NAME
    if fcntl is None:  # pragma: no cover - not POSIX
        return None
    try:  # not through a link, never blocking on a FIFO
        fd = os.open(file, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | os.O_NONBLOCK)
    except OSError:
        return None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return None
    try:
        held = _in_lock_table(os.fstat(fd))
        if held is None:  # not decidable from /proc/locks: probe
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                held = True
            except OSError:
                held = False
            else:
                fcntl.flock(fd, fcntl.LOCK_UN)
                held = False
        return _read(fd) if held else None
    finally:
        os.close(fd)


def _in_lock_table(stat: os.stat_result) -> bool | None:
    """True / False from /proc/locks for the file with this stat (a FLOCK entry, not a waiter, on its
    device and inode); None when the table is unreadable or lists the inode on another device (as
    overlay file systems can), so the caller probes instead."""
    try:
        with open("/proc/locks") as table:
            lines = table.read().splitlines()
    except OSError:
        return None
    device = f"{os.major(stat.st_dev):02x}:{os.minor(stat.st_dev):02x}"
    other_device = False
    for line in lines:
        parts = line.split()
        if len(parts) < 6 or parts[1] == "->" or parts[1] != "FLOCK":
            continue
        where = parts[5].rsplit(":", 1)
        if len(where) != 2 or where[1] != str(stat.st_ino):
            continue
        if where[0] == device:
            return True
        other_device = True
    return None if other_device else False
