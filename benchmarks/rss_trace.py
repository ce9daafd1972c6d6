"""Where a geomprobe command's memory goes: run it in this process, sample RSS every 20 ms, and at
each new high (20 MiB steps) record the main thread's stack (geomprobe and transformers frames).

    .venv/bin/python benchmarks/rss_trace.py run --model DIR --suite sula --null off --device cpu --out /tmp/r
    .venv/bin/python benchmarks/rss_trace.py extract --model tiny-neox --prompts demo

Prints, on stderr, one line per high: seconds since start, RSS MiB, the innermost frames; then the
process's ru_maxrss. The arguments are `geomprobe`'s own. The sampling thread holds the GIL for
microseconds every 20 ms, and psutil adds about 10 MiB to the figures.
"""

from __future__ import annotations

import os
import resource
import sys
import threading
import time
import traceback

import psutil

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KEEP = ("geomprobe", "transformers", "safetensors")


def _frames(frame) -> list[str]:
    out = []
    for entry in traceback.extract_stack(frame) if frame is not None else []:
        if any(part in entry.filename for part in KEEP):
            name = os.path.relpath(entry.filename, ROOT) if "geomprobe" in entry.filename else \
                os.path.basename(entry.filename)
            out.append(f"{name}:{entry.lineno} {entry.name}")
    return out


def main() -> None:
    process, main_thread = psutil.Process(), threading.get_ident()
    highs, done = [], threading.Event()

    def sample() -> None:
        best = 0.0
        while not done.is_set():
            rss = process.memory_info().rss / 2**20
            if rss > best + 20:
                best = rss
                highs.append((time.perf_counter(), rss, _frames(sys._current_frames().get(main_thread))))
            time.sleep(0.02)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    start = time.perf_counter()
    from geomprobe.cli import app

    try:
        app(sys.argv[1:], standalone_mode=False)
    finally:
        done.set()
        thread.join()
        for when, rss, where in highs:
            print(f"{when - start:7.1f}s {rss:8.0f} MiB  " + " <- ".join(reversed(where[-4:])), file=sys.stderr)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"ru_maxrss {peak:.0f} MiB", file=sys.stderr)


if __name__ == "__main__":
    main()
