"""geomprobe.allocator.release: freed heap pages go back to the system (glibc), so a run's RSS is
its live memory. The negative control is the same pattern without the release (the heap keeps
them), and GEOMPROBE_MALLOC_TRIM=0 turns it off."""

from __future__ import annotations

import os
import platform

import pytest
import torch

from geomprobe import allocator

glibc = pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc",
                           reason="malloc_trim is glibc's")


def _rss_mib() -> float:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _freed_heap_mib(release: bool) -> float:
    """Fill 160 MiB of heap with 64 KiB tensors (below glibc's mmap threshold), keep the last one
    (it pins the top of the heap, so free() cannot shrink it), free the rest: how much of the
    freed memory is still resident afterwards."""
    blocks = [torch.ones(16384) for _ in range(2560)]
    before = _rss_mib()
    del blocks[:-1]
    if release:
        assert allocator.release()
    kept = _rss_mib()
    del blocks
    return kept - (before - 160)


@glibc
def test_release_returns_freed_heap_pages_to_the_system():
    allocator._malloc_trim.cache_clear()
    held = _freed_heap_mib(release=False)
    released = _freed_heap_mib(release=True)
    assert held > 100  # the heap keeps what torch freed
    assert released < 40


@glibc
def test_release_can_be_turned_off(monkeypatch):
    monkeypatch.setenv("GEOMPROBE_MALLOC_TRIM", "0")
    allocator._malloc_trim.cache_clear()
    try:
        assert allocator.release() is False
    finally:
        monkeypatch.delenv("GEOMPROBE_MALLOC_TRIM")
        allocator._malloc_trim.cache_clear()
    assert allocator.release() is True
