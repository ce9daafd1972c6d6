"""What does a sweep save over separate `geomprobe run` calls?

    .venv/bin/python benchmarks/sweep_overhead.py              # 3 rounds (~2-4 minutes on 2 CPU cores)
    .venv/bin/python benchmarks/sweep_overhead.py --rounds 1 --json /tmp/sweep.json

Work: 2 built-in tiny models (tiny-neox, tiny-llama) x 2 suites (extract, geometry with small
settings: --n-per-quintile 2 --corpus math --null off --init-seeds 0 --step0 off --n-boot 20
--n-null 10), the same 4 (model, suite) results three ways, each from a fresh output directory:

  separate      4 `geomprobe run --model M --suite S` CLI calls, one after another (the two suites of
                a model go into one run directory, as when suites are added one by one): 4 processes,
                4 model loads
  sweep-inline  one `geomprobe sweep --executor inline` CLI call: 1 process, 2 model loads
  sweep-local   one `geomprobe sweep` CLI call (submitit LocalExecutor): the driver, and per job a
                submitit controller and the job's own process: 5 processes, 2 model loads

Wall seconds of the whole CLI call (process start included), median over rounds; the variants take
turns within a round, in an order rotated every round. The built-in models are built once before
timing, into a temporary GEOMPROBE_CACHE; HF_HUB_OFFLINE=1.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODELS = ("tiny-neox", "tiny-llama")
SUITES = ("extract", "geometry")
SMALL = ["--n-per-quintile", "2", "--corpus", "math", "--null", "off", "--init-seeds", "0", "--step0", "off",
         "--n-boot", "20", "--n-null", "10"]
VARIANTS = ("separate", "sweep-inline", "sweep-local")


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "geomprobe.cli", *args]


def _options_for(suite: str) -> list[str]:
    return SMALL if suite == "geometry" else ["--n-boot", "20"]


def commands(variant: str, out: Path) -> list[list[str]]:
    if variant == "separate":
        return [_cli("run", "--model", model, "--suite", suite, *_options_for(suite), "--out", str(out / model),
                     "--quiet") for model in MODELS for suite in SUITES]
    executor = "inline" if variant == "sweep-inline" else "local"
    return [_cli("sweep", "--models", ",".join(MODELS), "--suites", ",".join(SUITES), *SMALL, "--out", str(out),
                 "--executor", executor, "--quiet")]


def timed(variant: str, out: Path, env: dict) -> float:
    start = time.perf_counter()
    for command in commands(variant, out):
        done = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"{variant}: {' '.join(command)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="geomprobe-sweep-bench-"))
    env = {**os.environ, "GEOMPROBE_CACHE": str(work / "cache"), "HF_HUB_OFFLINE": "1",
           "TOKENIZERS_PARALLELISM": "false"}
    try:
        subprocess.run([sys.executable, "-c", "from geomprobe.models.builtin import ensure_builtin\n"
                        + "".join(f"ensure_builtin({m!r})\n" for m in MODELS)], env=env, check=True, cwd=ROOT)
        times: dict[str, list[float]] = {v: [] for v in VARIANTS}
        for round_index in range(args.rounds):
            order = VARIANTS[round_index % 3:] + VARIANTS[:round_index % 3]
            for variant in order:
                out = work / f"{variant}-{round_index}"
                times[variant].append(timed(variant, out, env))
                shutil.rmtree(out, ignore_errors=True)
                print(f"round {round_index + 1} {variant:13s} {times[variant][-1]:6.1f} s", flush=True)
        median = {v: statistics.median(t) for v, t in times.items()}
        load = os.getloadavg() if hasattr(os, "getloadavg") else None
        print(f"\n{len(MODELS)} models x {len(SUITES)} suites = {len(MODELS) * len(SUITES)} results; median of "
              f"{args.rounds} round(s); load average at the end {load[0]:.1f}" if load else "")
        print(f"{'variant':13s} {'processes':>9s} {'model loads':>11s} {'wall s':>7s} {'vs separate':>11s}")
        shape = {"separate": (4, 4), "sweep-inline": (1, 2), "sweep-local": (5, 2)}  # python processes, loads
        for variant in VARIANTS:
            processes, loads = shape[variant]
            print(f"{variant:13s} {processes:9d} {loads:11d} {median[variant]:7.1f} "
                  f"{median[variant] / median['separate']:10.2f}x")
        if args.json:
            args.json.write_text(json.dumps({"times_s": times, "median_s": median, "rounds": args.rounds,
                                             "load_average": load, "python": sys.version.split()[0]}, indent=2))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
