"""Giving freed heap memory back to the operating system between forward batches (glibc only).

torch allocates CPU tensors with the C library's malloc. glibc raises its mmap threshold each time
a large block is freed, so after the first batches the activations of later ones (tens of MiB per
tensor) come from the heap, and the heap keeps every page it ever held: over a run of batches of
varying length the process's RSS grew to 1.2-1.5x the largest batch's live activations on a
Pythia-410M-shaped model (benchmarks/RESULTS.md), above what `geomprobe plan` counts.
`release()` calls glibc's malloc_trim(0) after each batch, which returns the free pages (top of the
heap and inside it) to the system: the peak is then the largest batch, as planned. The next batch
faults its pages in once (not once per layer, as a fixed low mmap threshold would).

A no-op where the C library has no malloc_trim (macOS, musl, Windows) and with
GEOMPROBE_MALLOC_TRIM=0.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os


@functools.cache
def _malloc_trim():
    if os.environ.get("GEOMPROBE_MALLOC_TRIM", "1") == "0":
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim


def release() -> bool:
    """Return the heap's free pages to the system; True when the C library could (glibc)."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True
