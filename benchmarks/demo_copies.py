"""What the untrained copies cost a run, suite by suite: the same run with the default copies, then
without (--null off), then once more with the copies (a second run of the same architecture,
which finds the copies' extractions in the copy cache).

    .venv/bin/python benchmarks/demo_copies.py                        # make demo's first run: ~5-10 min
    .venv/bin/python benchmarks/demo_copies.py --model tiny-neox --suite geometry,sula
    .venv/bin/python benchmarks/demo_copies.py --json /tmp/demo-copies.json
    .venv/bin/python benchmarks/demo_copies.py --untrained 7   # an untrained model of the demo model's shape

--untrained SEED replaces the model by a fresh initialisation of its architecture (torch seed SEED,
saved with its tokenizer and, for a wind tunnel, its windtunnel.json, so it runs the same suites):
a model whose statistics are indistinguishable from its copies, where the sequential stop applies.

Each run is `geomprobe run --model M --suite S` in this process (typer's CliRunner, as the recorded
outputs are made), into a fresh directory under a temporary folder, with a fresh copy cache there
(GEOMPROBE_CACHE is left alone, so the built-in models are not rebuilt: the copy cache alone is
pointed at the temporary folder).
Every registered suite's run function is wrapped to time it (wall and this process's CPU), and
`geomprobe.nulls.fresh_copy` is wrapped to count the copies built and the time spent building them.
From each suite's results.json: the copies planned and used, and for each decision against the
copies the number of copies it read (n_nulls).

Printed: one table per run and the ratios the issue asks for: the run with copies over the run
without (target 3x), and the second run with copies over the run without (target 1.5x).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path


def run_once(model: str, suites: str, out: Path, extra: list[str]) -> dict:
    from typer.testing import CliRunner

    import geomprobe.nulls as nulls
    from geomprobe.cli import app
    from geomprobe.suites import SUITES
    timings: dict[str, dict] = {}
    current = {"suite": None}
    real_copy = nulls.fresh_copy

    def counted_copy(*args, **kwargs):
        start = time.perf_counter()
        try:
            return real_copy(*args, **kwargs)
        finally:
            entry = timings.setdefault(current["suite"], {})
            entry["builds"] = entry.get("builds", 0) + 1
            entry["build_s"] = entry.get("build_s", 0.0) + time.perf_counter() - start

    import dataclasses

    wrapped = dict(SUITES)
    for name, spec in wrapped.items():

        def timed(ctx, _run=spec.run, _name=name):
            current["suite"] = _name
            wall, cpu = time.perf_counter(), time.process_time()
            try:
                return _run(ctx)
            finally:
                entry = timings.setdefault(_name, {})
                entry["wall_s"] = time.perf_counter() - wall
                entry["cpu_s"] = time.process_time() - cpu

        SUITES[name] = dataclasses.replace(spec, run=timed)  # SuiteSpec is frozen
    nulls.fresh_copy = counted_copy
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        result = CliRunner().invoke(app, ["run", "--model", model, "--suite", suites, "--out", str(out), "--quiet",
                                          *extra])
    finally:
        nulls.fresh_copy = real_copy
        SUITES.update(wrapped)
    total = {"wall_s": time.perf_counter() - wall, "cpu_s": time.process_time() - cpu}
    if result.exit_code != 0:
        raise SystemExit(f"geomprobe run failed ({result.exit_code}): {result.output[-2000:]}")
    for name, entry in timings.items():
        if name is None:
            continue
        path = out / name / "results.json"
        if not path.exists():
            continue
        nulls_part = _untrained(json.loads(path.read_text()))
        if nulls_part:
            entry["copies"] = nulls_part.get("copies")
            entry["decisions"] = {key: cmp.get("n_nulls") for key, cmp in (nulls_part.get("comparisons") or {}).items()
                                  if isinstance(cmp, dict)}
    return {"total": total, "suites": {k: v for k, v in timings.items() if k is not None}}


def untrained_model(spec: str, seed: int, path: Path) -> str:
    """A fresh initialisation of `spec`'s architecture saved at `path` (with the tokenizer and any
    windtunnel.json): the directory, as a model spec."""
    import shutil

    from geomprobe.models import load_model
    from geomprobe.nulls import fresh_copy

    loaded = load_model(spec, device="cpu")
    fresh_copy(loaded, seed).model.save_pretrained(path)
    loaded.tokenizer.save_pretrained(path)
    info = Path(str(loaded.source)) / "windtunnel.json"
    if info.exists():
        shutil.copyfile(info, path / "windtunnel.json")
    return str(path)


def _untrained(results: dict) -> dict | None:
    """The results' comparison with the untrained copies, wherever the suite keeps it."""
    for key in ("untrained_null", "nulls", "untrained"):
        part = results.get(key)
        if isinstance(part, dict) and "comparisons" in part:
            return part
    for value in results.values():
        if isinstance(value, dict):
            for key in ("untrained_null", "untrained"):
                part = value.get(key)
                if isinstance(part, dict) and "comparisons" in part:
                    return part
    return None


def show(label: str, run: dict) -> None:
    print(f"\n{label}: {run['total']['wall_s']:.1f} s wall, {run['total']['cpu_s']:.1f} s CPU")
    print("| suite | wall s | CPU s | copies built | building s | copies used / planned | copies per decision |")
    print("|---|---:|---:|---:|---:|---|---|")
    for name, entry in run["suites"].items():
        copies = entry.get("copies") or {}
        used = f"{copies.get('used')} / {copies.get('planned')}" if copies else ""
        decisions = ", ".join(f"{k} {v}" for k, v in (entry.get("decisions") or {}).items())
        print(f"| {name} | {entry.get('wall_s', 0):.1f} | {entry.get('cpu_s', 0):.1f} | {entry.get('builds', 0)} | "
              f"{entry.get('build_s', 0):.2f} | {used} | {decisions} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="windtunnel-sula")
    parser.add_argument("--suite", default="all")
    parser.add_argument("--extra", default="", help="more `geomprobe run` options, space-separated")
    parser.add_argument("--json", default=None, help="also write the raw figures here")
    parser.add_argument("--untrained", type=int, default=None, metavar="SEED",
                        help="measure a fresh initialisation of the model's architecture instead (this torch seed)")
    args = parser.parse_args()
    extra = args.extra.split()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        if args.untrained is not None:
            args.model = untrained_model(args.model, args.untrained, tmp / f"untrained-{args.untrained}")
        os.environ["GEOMPROBE_COPY_CACHE_MB"] = os.environ.get("GEOMPROBE_COPY_CACHE_MB", "4096")
        from geomprobe import copycache

        copycache_root = tmp / "copy-cache"
        copycache.root = lambda: copycache_root  # a fresh copy cache for this benchmark
        runs = {"with copies": run_once(args.model, args.suite, tmp / "with", extra),
                "without copies (--null off)": run_once(args.model, args.suite, tmp / "without",
                                                        [*extra, "--null", "off"]),
                "second run with copies (copy cache warm)": run_once(args.model, args.suite, tmp / "again", extra)}
    for label, run in runs.items():
        show(label, run)
    base = runs["without copies (--null off)"]["total"]
    first, second = runs["with copies"]["total"], runs["second run with copies (copy cache warm)"]["total"]
    print(f"\nwith copies / without: wall {first['wall_s'] / base['wall_s']:.2f}x, CPU {first['cpu_s'] / base['cpu_s']:.2f}x "
          "(target 3x)")
    print(f"second run with copies / without: wall {second['wall_s'] / base['wall_s']:.2f}x, "
          f"CPU {second['cpu_s'] / base['cpu_s']:.2f}x (target 1.5x)")
    builds = sum(entry.get("builds", 0) for entry in runs["with copies"]["suites"].values())
    print(f"copies built in the first run: {builds}")
    if args.json:
        Path(args.json).write_text(json.dumps({"model": args.model, "suite": args.suite, "extra": extra,
                                               "python": platform.python_version(), "runs": runs}, indent=1))


if __name__ == "__main__":
    sys.exit(main())
