"""Does extraction's peak memory grow with the number of prompts?

    .venv/bin/python benchmarks/extraction_memory.py                  # N = 1,000 and 100,000 (~3-5 min)
    .venv/bin/python benchmarks/extraction_memory.py --n 1000,20000   # other sizes
    .venv/bin/python benchmarks/extraction_memory.py --json out.json  # also keep the raw figures
    .venv/bin/python benchmarks/extraction_memory.py --cli --n 1000,20000,100000   # the whole command

Each N runs in a fresh child process: it loads the built-in `tiny-neox` (random init, 4 layers,
8 heads, d_model 128; built into ~/.cache/geomprobe on first use), synthesises N short prompts
("The <adjective> <noun> of <place> number <i> was", about 10 tokens), and extracts them with
`geomprobe.extraction.extract` (hf backend, all layers, readout "values", batch size 8) to a
temporary out_dir, as `geomprobe run --suite extract` does, with torch on 1 thread (--threads).
It then reports:

  peak RSS      resource.getrusage(RUSAGE_SELF).ru_maxrss of the child: the whole process, with
                Python, torch, the model and the N prompts themselves, after extract() returned
  before        RSS (VmRSS) just before extract() was called, the prompts already made
  arrays        the bytes of the final .npy files extract() wrote (what the old extraction held in
                memory, twice, before writing)
  time          wall seconds of extract()

and the ratio of the largest N's peak RSS to the smallest N's.

With --cli each N runs `geomprobe run --model tiny-neox --suite extract --prompts FILE --out DIR
--quiet` instead (the N prompts written to a .txt file, one per line), and peak RSS is the
command's own ru_maxrss (os.wait4): extraction plus the suite's summary, its bootstraps and the
results written, as a user runs it. PYTHONPATH=<checkout> runs another checkout's geomprobe the
same way (the before/after figures in RESULTS.md). Target: within 1.2x, i.e. memory
does not grow with N (the arrays are streamed to shards and assembled on disk; see
geomprobe/extraction/).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ADJECTIVES = ["red", "quiet", "ancient", "bright", "narrow", "famous", "hidden", "broken", "gentle", "distant"]
NOUNS = ["river", "castle", "garden", "engine", "letter", "market", "island", "bridge", "forest", "window"]
PLACES = ["Paris", "the valley", "the north", "Rome", "the coast", "Lisbon", "the hills", "Cairo", "Oslo", "Lima"]


def make_prompts(n: int):
    from geomprobe.prompts import Prompt

    return [Prompt(f"p{i:06d}", f"The {ADJECTIVES[i % 10]} {NOUNS[(i // 10) % 10]} of {PLACES[(i // 100) % 10]} "
                                f"number {i} was") for i in range(n)]


def vm_rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def child(n: int, batch_size: int, threads: int) -> dict:
    import torch

    torch.set_num_threads(threads)
    from geomprobe.extraction import ExtractionConfig, extract
    from geomprobe.models import load_model

    loaded = load_model("tiny-neox")
    prompts = make_prompts(n)
    with tempfile.TemporaryDirectory(prefix="gp-extraction-memory-") as work:
        out = Path(work) / "extraction"
        before = vm_rss_mib()
        start = time.perf_counter()
        ex = extract(loaded, prompts, ExtractionConfig(batch_size=batch_size), out_dir=out, progress=False)
        seconds = time.perf_counter() - start
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
        arrays = {p.stem: p.stat().st_size for p in sorted(out.glob("*.npy"))}
        n_tokens = int(ex["n_tokens"].sum())
        del ex
    return {"n": n, "batch_size": batch_size, "threads": threads, "seconds": seconds, "peak_rss_mib": peak,
            "rss_before_mib": before, "array_mib": sum(arrays.values()) / 2**20, "arrays": arrays, "tokens": n_tokens}


def cli_child(n: int, batch_size: int, threads: int) -> dict:
    """`geomprobe run --suite extract` on n prompts in a child process: its peak RSS and seconds."""
    with tempfile.TemporaryDirectory(prefix="gp-extraction-memory-cli-") as work:
        path = Path(work) / "prompts.txt"
        path.write_text("".join(p.text + "\n" for p in make_prompts(n)))
        env = {**os.environ, "OMP_NUM_THREADS": str(threads), "TOKENIZERS_PARALLELISM": "false"}
        start = time.perf_counter()
        with open(Path(work) / "stderr.txt", "w") as err:
            process = subprocess.Popen([sys.executable, "-m", "geomprobe", "run", "--model", "tiny-neox", "--suite",
                                        "extract", "--prompts", str(path), "--out", str(Path(work) / "run"),
                                        "--quiet", "--batch-size", str(batch_size)],
                                       env=env, stdout=subprocess.DEVNULL, stderr=err)
            _, status, usage = os.wait4(process.pid, 0)  # the child's own rusage (Popen.wait would discard it)
            process.returncode = os.waitstatus_to_exitcode(status)
        seconds = time.perf_counter() - start
        if process.returncode:
            sys.exit(f"geomprobe run on N={n} failed:\n{(Path(work) / 'stderr.txt').read_text()}")
        arrays = sum(p.stat().st_size for p in (Path(work) / "run" / "extraction").glob("*.npy"))
    peak = usage.ru_maxrss / 1024  # KiB on Linux
    return {"n": n, "batch_size": batch_size, "threads": threads, "seconds": seconds, "peak_rss_mib": peak,
            "rss_before_mib": float("nan"), "array_mib": arrays / 2**20, "tokens": 0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", default="1000,100000", help="comma-separated numbers of prompts")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads per child (1: a tiny model's small kernels gain nothing from 2, and "
                             "lose a lot when other jobs share the cores)")
    parser.add_argument("--json", help="write the raw figures here")
    parser.add_argument("--cli", action="store_true", help="time the whole `geomprobe run --suite extract` command")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(child(args.child, args.batch_size, args.threads)))
        return
    sizes = [int(n) for n in args.n.split(",")]
    env = {**os.environ, "OMP_NUM_THREADS": str(args.threads), "TOKENIZERS_PARALLELISM": "false"}
    rows = []
    for n in sizes:
        if args.cli:
            row = cli_child(n, args.batch_size, args.threads)
            rows.append(row)
            print(f"N={n:>7,}: geomprobe run --suite extract peak RSS {row['peak_rss_mib']:7.1f} MiB, "
                  f"arrays {row['array_mib']:6.1f} MiB, {row['seconds']:6.1f} s", flush=True)
            continue
        done = subprocess.run([sys.executable, __file__, "--child", str(n), "--batch-size", str(args.batch_size),
                               "--threads", str(args.threads)], capture_output=True, text=True, env=env)
        if done.returncode != 0:
            sys.exit(f"child N={n} failed:\n{done.stderr}")
        row = json.loads(done.stdout.strip().splitlines()[-1])
        rows.append(row)
        print(f"N={n:>7,}: peak RSS {row['peak_rss_mib']:7.1f} MiB (before extract {row['rss_before_mib']:6.1f}), "
              f"arrays {row['array_mib']:6.1f} MiB, {row['seconds']:6.1f} s", flush=True)
    print()
    print("| N prompts | tokens | extract s | RSS before extract MiB | peak RSS MiB | peak - before MiB | arrays MiB |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        print(f"| {row['n']:,} | {row['tokens']:,} | {row['seconds']:.1f} | {row['rss_before_mib']:.1f} | "
              f"{row['peak_rss_mib']:.1f} | {row['peak_rss_mib'] - row['rss_before_mib']:.1f} | {row['array_mib']:.1f} |")
    small, large = rows[0], rows[-1]
    ratio = large["peak_rss_mib"] / small["peak_rss_mib"]
    print(f"\npeak RSS ratio N={large['n']:,} / N={small['n']:,}: {ratio:.3f}x (target <= 1.2x: "
          f"{'met' if ratio <= 1.2 else 'NOT met'}); arrays grew {large['array_mib'] / small['array_mib']:.0f}x")
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows, "ratio": ratio, "python": platform.python_version(),
                                               "cpus": os.cpu_count()}, indent=2))


if __name__ == "__main__":
    main()
