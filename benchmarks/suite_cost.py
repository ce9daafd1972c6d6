"""What does prefix reuse (geomprobe/prefix.py) save in the ablation suite?

    .venv/bin/python benchmarks/suite_cost.py                    # ~2-6 min on 2 CPU cores
    .venv/bin/python benchmarks/suite_cost.py --n-per-k 2        # quicker (10 prompts)
    .venv/bin/python benchmarks/suite_cost.py --json out.json    # also keep the raw figures

Model: a randomly initialised GPT-NeoX of Pythia-410M's published shape
(geomprobe.models.published.config_for("pythia-410m"): 24 layers, d_model 1024, 16 heads, d_mlp
4096, rotary_pct 0.25, parallel residual; float32) with a smaller vocabulary (--vocab, default
1024, so that geomprobe's built-in tiny-neox byte-level tokenizer, 512 tokens, fits), normal(0,
0.02) weights, saved to a temporary directory with that tokenizer.

The suite: `geomprobe run --model <dir> --suite ablation` through the Python API (geomprobe.run)
with the default layers (24 layers: L12, L22 and multi 8, 12, 16, 20, 22), --ops cut, --n-random
19, --n-per-k 4 with --k 0,1,2,4,8 (20 SULA prompts), --batch-size 8, --n-boot 100: 1 + 3 x 20 = 61
passes, plus the SULA main extraction that fits the axes. Two variants, each in its own fresh
child process (torch threads 2), the same command, one after the other:

  full     GEOMPROBE_PREFIX_REUSE=0: every pass a full forward pass (the suite before prefix reuse)
  prefix   the default: the edited passes that share their first edited layer l0 run blocks
           0..l0-1 once per batch (geomprobe.prefix.SharedPrefix) and only blocks l0..23 each

Reported per variant (the least over its runs, when --order repeats it): wall and CPU seconds
of the whole `run(...)` call (model loading excluded: the child loads it first, timed apart) and
of the 61 passes alone (the suite's _cached_pass calls), and peak RSS (VmHWM of the child:
weights, Python and torch included; the peak is reset after loading, so it is the run's own
peak) and its rise over the RSS before the run. Ratios are prefix / full. The ideal ratio is
the layer count: sum over passes of (L - l0) / L divided by the number of passes (the baseline
pass and the axis-fitting extraction count 1 each in the whole suite's figure). Targets (issue
17): wall time <= 0.5x the full passes', memory <= 1.2x. Timings on a shared machine vary by 2x
and more with other programs' load: repeat the variants (--order full,prefix,prefix,full).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

THREADS = 2
TARGET_TIME, TARGET_MEM = 0.5, 1.2
VARIANTS = {"full": "0", "prefix": "1"}


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _status_mib(field: str) -> float | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def _reset_peak() -> bool:
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def build_model(path: Path, vocab: int) -> dict:
    import torch
    import transformers

    from geomprobe.models.builtin import build_tokenizer
    from geomprobe.models.published import config_for

    config = config_for("pythia-410m", vocab_size=vocab, bos_token_id=0, eos_token_id=0)
    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model = model.to_empty(device="cpu")
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for name, param in model.named_parameters():
            if param.ndim >= 2:
                param.normal_(0.0, 0.02, generator=generator)
            elif "norm" in name:
                param.fill_(1.0)
            else:
                param.zero_()
    model.save_pretrained(path)
    build_tokenizer("tiny-neox").save_pretrained(path)
    return {"n_layers": config.num_hidden_layers, "d_model": config.hidden_size, "vocab_size": config.vocab_size,
            "n_params": sum(p.numel() for p in model.parameters())}


# ---------------------------------------------------------------------------------------------
# child: one variant


def child(args) -> None:
    import logging
    import warnings

    import torch

    warnings.filterwarnings("ignore")
    logging.getLogger("transformers").setLevel(logging.ERROR)
    torch.set_num_threads(THREADS)
    import geomprobe.models as models
    import geomprobe.suites.ablation.passes as ablation_passes
    from geomprobe.runner import RunConfig, run
    from geomprobe.suites.ablation import AblationConfig

    t0 = time.perf_counter()
    loaded = models.load_model(str(args.model_dir))
    load_s = time.perf_counter() - t0
    models.load_model = lambda *a, **k: loaded  # the run uses the model loaded (and timed) above

    passes = {"wall_s": 0.0, "cpu_s": 0.0, "n": 0}
    real = ablation_passes._cached_pass  # run_passes looks it up there

    def timed(path, key, compute):
        w, c = time.perf_counter(), time.process_time()
        try:
            return real(path, key, compute)
        finally:
            passes["wall_s"] += time.perf_counter() - w
            passes["cpu_s"] += time.process_time() - c
            passes["n"] += 1

    ablation_passes._cached_pass = timed
    rss_before = _status_mib("VmRSS")
    reset = _reset_peak()
    w, c = time.perf_counter(), time.process_time()
    run(RunConfig(model=str(args.model_dir), out=str(args.out), batch_size=args.batch_size, seed=0),
        AblationConfig(n_per_k=args.n_per_k, k_values=tuple(args.k), ops=args.ops, n_random=args.n_random,
                       n_boot=args.n_boot), progress=False)
    wall, cpu = time.perf_counter() - w, time.process_time() - c
    results = json.loads((Path(args.out) / "ablation" / "results.json").read_text())
    settings = results["settings"]
    out = {"load_s": load_s, "run_wall_s": wall, "run_cpu_s": cpu, "passes": passes,
           "rss_before_mib": rss_before, "peak_rss_mib": _status_mib("VmHWM"), "peak_reset": reset,
           "n_forward_passes": settings["n_forward_passes"], "layer_sets": settings["layer_sets"],
           "prefix_reuse": settings["prefix_reuse"], "prefix_reuse_note": settings["prefix_reuse_note"],
           "prefix_reuse_groups": settings["prefix_reuse_groups"],
           "edited_block_runs_fraction": settings["edited_block_runs_fraction"],
           "n_layers": loaded.adapter.shape.n_layers,
           "numbers": {"baseline": results["baseline"], "conditions": results["conditions"]}}
    Path(args.result).write_text(json.dumps(out))


# ---------------------------------------------------------------------------------------------
# parent


def _best(runs: list[dict]) -> dict:
    """One variant's figures over its runs: the least time (load from other programs only adds
    time), the largest peak RSS; every run's kept under "runs"."""
    best = dict(runs[0])
    for key in ("run_wall_s", "run_cpu_s", "load_s"):
        best[key] = min(r[key] for r in runs)
    best["passes"] = {"wall_s": min(r["passes"]["wall_s"] for r in runs),
                      "cpu_s": min(r["passes"]["cpu_s"] for r in runs), "n": runs[0]["passes"]["n"]}
    best["peak_rss_mib"] = max(r["peak_rss_mib"] for r in runs)
    best["rss_before_mib"] = max(r["rss_before_mib"] for r in runs)
    best["runs"] = [{key: r[key] for key in ("run_wall_s", "run_cpu_s", "passes", "peak_rss_mib")} for r in runs]
    for r in runs[1:]:
        if _same_numbers(runs[0]["numbers"], r["numbers"]):
            raise AssertionError("two runs of the same variant gave different numbers")
    return best


def ideal_ratios(layer_sets, n_random: int, n_ops: int, n_layers: int) -> dict:
    edited = [(n_layers - min(s["layers"])) / n_layers for s in layer_sets for _ in range(n_ops * (1 + n_random))]
    passes = 1 + len(edited)  # the baseline and the edited passes
    return {"edited_passes": sum(edited) / len(edited), "passes": (1 + sum(edited)) / passes,
            "suite_with_axis_fit": (2 + sum(edited)) / (passes + 1), "n_edited": len(edited)}


def _same_numbers(a, b, path="") -> float:
    """The largest absolute difference between two results trees (the same keys and types)."""
    if isinstance(a, dict):
        return max((_same_numbers(a[k], b[k], f"{path}.{k}") for k in a), default=0.0)
    if isinstance(a, list):
        return max((_same_numbers(x, y, path) for x, y in zip(a, b, strict=True)), default=0.0)
    if isinstance(a, (int, float)) and not isinstance(a, bool) and b is not None:
        return abs(float(a) - float(b))
    if a != b:
        raise AssertionError(f"{path}: {a!r} != {b!r}")
    return 0.0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-per-k", type=int, default=4)
    parser.add_argument("--k", type=lambda s: [int(x) for x in s.split(",")], default=[0, 1, 2, 4, 8])
    parser.add_argument("--ops", default="cut")
    parser.add_argument("--n-random", type=int, default=19)
    parser.add_argument("--n-boot", type=int, default=100)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--vocab", type=int, default=1024)
    parser.add_argument("--order", default="full,prefix",
                        help="the runs, in order (a variant may repeat, e.g. full,prefix,prefix,full: each variant's "
                             "least time and largest peak RSS are reported)")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--model-dir", type=Path, default=None, help="reuse a model built by an earlier run")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--out", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--result", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args)
        return 0
    started = time.perf_counter()
    temp = tempfile.mkdtemp(prefix="geomprobe-suite-cost-")
    try:
        model_dir = args.model_dir or Path(temp) / "pythia-410m-shaped"
        shape = None
        if not (model_dir / "config.json").exists():
            log(f"[build] random Pythia-410M-shaped GPT-NeoX (vocab {args.vocab}) -> {model_dir}")
            t0 = time.perf_counter()
            shape = build_model(model_dir, args.vocab)
            log(f"[build] {shape['n_params']:,} parameters, {time.perf_counter() - t0:.1f} s")
        runs: dict[str, list] = {}
        for number, name in enumerate(args.order.split(",")):
            out, result = Path(temp) / f"run-{number}-{name}", Path(temp) / f"{number}-{name}.json"
            command = [sys.executable, __file__, "--child", name, "--model-dir", str(model_dir), "--out", str(out),
                       "--result", str(result), "--n-per-k", str(args.n_per_k), "--k", ",".join(map(str, args.k)),
                       "--ops", args.ops, "--n-random", str(args.n_random), "--n-boot", str(args.n_boot),
                       "--batch-size", str(args.batch_size)]
            env = {**os.environ, "GEOMPROBE_PREFIX_REUSE": VARIANTS[name], "OMP_NUM_THREADS": str(THREADS),
                   "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
            log(f"[{name}] running")
            t0 = time.perf_counter()
            subprocess.run(command, env=env, check=True)
            runs.setdefault(name, []).append(json.loads(result.read_text()))
            log(f"[{name}] {time.perf_counter() - t0:.1f} s")
    finally:
        shutil.rmtree(temp, ignore_errors=True)
    variants = {name: _best(done) for name, done in runs.items()}

    full, reused = variants["full"], variants["prefix"]
    n_ops = len({c["id"].split("/")[0] for c in full["numbers"]["conditions"]})
    ideal = ideal_ratios(full["layer_sets"], args.n_random, n_ops, full["n_layers"])
    difference = _same_numbers(full["numbers"], reused["numbers"])
    ratios = {
        "passes_wall": reused["passes"]["wall_s"] / full["passes"]["wall_s"],
        "passes_cpu": reused["passes"]["cpu_s"] / full["passes"]["cpu_s"],
        "run_wall": reused["run_wall_s"] / full["run_wall_s"],
        "run_cpu": reused["run_cpu_s"] / full["run_cpu_s"],
        "peak_rss": reused["peak_rss_mib"] / full["peak_rss_mib"],
    }
    from importlib.metadata import version

    report = {"variants": variants, "ratios": ratios, "ideal": ideal, "max_abs_difference_results": difference,
              "settings": {k: getattr(args, k) for k in ("n_per_k", "k", "ops", "n_random", "n_boot", "batch_size",
                                                         "vocab", "order")},
              "model": shape, "total_s": time.perf_counter() - started,
              "env": {"python": platform.python_version(), "torch": version("torch"),
                      "transformers": version("transformers"), "cpus": os.cpu_count(), "threads": THREADS,
                      "date": date.today().isoformat(), "load_average": os.getloadavg()},
              "command": " ".join([".venv/bin/python", "benchmarks/suite_cost.py", *(argv or sys.argv[1:])])}
    for variant in variants.values():
        variant.pop("numbers")
    report["runs"] = {name: len(done) for name, done in runs.items()}
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    print(f"ablation suite cost: random Pythia-410M-shaped GPT-NeoX (24 layers, vocab {args.vocab}), float32, CPU, "
          f"torch threads {THREADS}; {full['n_forward_passes']} passes of {args.n_per_k * len(args.k)} prompts; runs "
          f"{args.order} (least time of each variant)")
    print(f"{'':22}{'full':>10}{'prefix':>10}{'ratio':>8}{'ideal':>8}")
    rows = [("passes wall s", full["passes"]["wall_s"], reused["passes"]["wall_s"], ratios["passes_wall"],
             ideal["passes"]),
            ("passes CPU s", full["passes"]["cpu_s"], reused["passes"]["cpu_s"], ratios["passes_cpu"], ideal["passes"]),
            ("run wall s", full["run_wall_s"], reused["run_wall_s"], ratios["run_wall"], ideal["suite_with_axis_fit"]),
            ("run CPU s", full["run_cpu_s"], reused["run_cpu_s"], ratios["run_cpu"], ideal["suite_with_axis_fit"]),
            ("peak RSS MiB", full["peak_rss_mib"], reused["peak_rss_mib"], ratios["peak_rss"], None)]
    for label, a, b, ratio, best in rows:
        print(f"{label:22}{a:10.1f}{b:10.1f}{ratio:8.3f}{'' if best is None else f'{best:8.3f}'}")
    print(f"peak RSS rise over the run's start: full {full['peak_rss_mib'] - full['rss_before_mib']:.0f} MiB, prefix "
          f"{reused['peak_rss_mib'] - reused['rss_before_mib']:.0f} MiB")
    print(f"prefix variant: {reused['prefix_reuse_note']}")
    print(f"results.json numbers, largest |full - prefix|: {difference:.3g}")
    met_time, met_mem = ratios["passes_wall"] <= TARGET_TIME, ratios["peak_rss"] <= TARGET_MEM
    print(f"targets: passes wall <= {TARGET_TIME}x: {'met' if met_time else 'NOT met'}; peak RSS <= {TARGET_MEM}x: "
          f"{'met' if met_mem else 'NOT met'}; total {report['total_s']:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
