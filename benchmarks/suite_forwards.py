"""The SULA and geometry suites' wall time against the bare forward passes they need.

    .venv/bin/python benchmarks/suite_forwards.py                       # ~5-10 min on 2 CPU cores
    .venv/bin/python benchmarks/suite_forwards.py --suites sula --rounds 1
    .venv/bin/python benchmarks/suite_forwards.py --null off            # without the untrained nulls
    .venv/bin/python benchmarks/suite_forwards.py --json out.json       # also keep the raw figures

Model: the random Pythia-410M-shaped GPT-NeoX of benchmarks/suite_cost.py (24 layers, d_model
1024, 16 heads, d_mlp 4096, parallel residual, float32, vocabulary cut to 1,024 for the built-in
byte-level tokenizer), saved to a temporary directory.

For each suite, one child process (torch threads 2) loads the model once (timed apart) and then,
--rounds times, in turn:

  suite   `geomprobe.run(RunConfig(model=<dir>, ...), <suite config>)` into a fresh run
          directory, with every batch that reaches HFBackend.run_batch recorded (its input_ids and
          attention_mask, the untrained null models' batches included) and the time spent in
          run_batch summed
  bare    the same recorded batches through a plain Hugging Face forward of the same weights:
          `model(input_ids, attention_mask=..., use_cache=False)` under torch.no_grad, a second
          copy loaded with attn_implementation="sdpa" (the forward a user would write without
          geomprobe)

The ratio is suite wall / bare wall (least of each over the rounds). "Forwards" is the suite's own
time inside run_batch; "the rest" is everything else the suite does: tokenising and batching,
building the null models' fresh weights (shown apart: "nulls"), PCA, bootstraps, writing files. Target: the
suite's wall time <= 1.1x the bare forwards'. The copy cache is off in the child, so the
untrained copies' forwards are computed (and replayed in the bare loop) on every run.

Settings: sula --n-per-k 4 with k 0,1,2,4,8 (20 prompts a condition, the main condition and every
control), geometry on the built-in demo prompts, --batch-size 8, the suites' default nulls
(init:3) unless --null says otherwise, --n-boot 200.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))

from suite_cost import THREADS, build_model, log  # noqa: E402 - the same model as the ablation benchmark

TARGET = 1.1


def suite_config(name: str, args):
    if name == "sula":
        from geomprobe.suites.sula import SulaConfig

        return SulaConfig(n_per_k=args.n_per_k, k_values=tuple(args.k), null=args.null, n_boot=args.n_boot)
    if name == "geometry":
        from geomprobe.suites.geometry import GeometryConfig

        if args.geometry_prompts:  # the given prompts, all of them: no candidate scoring
            return GeometryConfig(null=args.null, n_boot=args.n_boot, n_per_quintile=0)
        return GeometryConfig(null=args.null, n_boot=args.n_boot)
    raise SystemExit(f"unknown suite {name!r}: choose sula or geometry")


def child(args) -> None:
    import logging
    import warnings

    import torch

    warnings.filterwarnings("ignore")
    logging.getLogger("transformers").setLevel(logging.ERROR)
    torch.set_num_threads(args.threads)
    # every copy computed here: a copy cache warmed by an earlier run of this benchmark (the same
    # architecture) would leave the copies' forwards out of the suite and the bare loop alike
    os.environ["GEOMPROBE_COPY_CACHE_MB"] = "0"
    import transformers

    import geomprobe.models as models
    from geomprobe.backends.hf import HFBackend
    from geomprobe.runner import RunConfig, run

    t0 = time.perf_counter()
    loaded = models.load_model(str(args.model_dir))
    load_s = time.perf_counter() - t0
    real_load = models.load_model

    def load(spec, *a, **k):  # the run's own model is the one loaded (and timed) above; nulls load as usual
        return loaded if str(spec) == str(args.model_dir) else real_load(spec, *a, **k)

    models.load_model = load
    bare = transformers.AutoModelForCausalLM.from_pretrained(str(args.model_dir), attn_implementation="sdpa",
                                                             dtype=torch.float32).eval()

    batches, inside = [], {"s": 0.0}
    real_batch = HFBackend.run_batch

    def recorded(self, input_ids, attention_mask, final_index):
        batches.append((input_ids.clone(), attention_mask.clone()))
        w = time.perf_counter()
        try:
            return real_batch(self, input_ids, attention_mask, final_index)
        finally:
            inside["s"] += time.perf_counter() - w

    HFBackend.run_batch = recorded
    import geomprobe.nulls as nulls

    builds = {"s": 0.0}
    real_null = nulls.fresh_copy

    def timed_null(*a, **k):  # building an untrained null's fresh weights: not a forward
        w = time.perf_counter()
        try:
            return real_null(*a, **k)
        finally:
            builds["s"] += time.perf_counter() - w

    nulls.fresh_copy = timed_null
    rounds = []
    for number in range(args.rounds):
        batches.clear()
        inside["s"] = builds["s"] = 0.0
        out = Path(args.out) / f"round-{number}"
        w = time.perf_counter()
        prompts = args.prompts_file if args.suite == "geometry" and args.geometry_prompts else None
        run(RunConfig(model=str(args.model_dir), out=str(out), batch_size=args.batch_size, seed=0, prompts=prompts,
                      max_tokens=args.max_tokens if args.suite == "geometry" else None),
            suite_config(args.suite, args), progress=False)
        suite_s = time.perf_counter() - w
        w = time.perf_counter()
        with torch.no_grad():
            for input_ids, attention_mask in batches:
                bare(input_ids=input_ids, attention_mask=attention_mask, use_cache=False)
        bare_s = time.perf_counter() - w
        rounds.append({"suite_s": suite_s, "inside_run_batch_s": inside["s"], "bare_s": bare_s,
                       "null_builds_s": builds["s"],
                       "n_batches": len(batches), "n_sequences": sum(int(b[0].shape[0]) for b in batches),
                       "n_tokens": sum(int(b[1].sum()) for b in batches),
                       "n_padded_tokens": sum(int(b[1].numel()) for b in batches)})
        log(f"[{args.suite}] round {number}: suite {suite_s:.1f} s, bare forwards {bare_s:.1f} s "
            f"({len(batches)} batches)")
    Path(args.result).write_text(json.dumps({"load_s": load_s, "rounds": rounds}))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suites", default="sula,geometry")
    parser.add_argument("--n-per-k", type=int, default=4)
    parser.add_argument("--k", type=lambda s: [int(x) for x in s.split(",")], default=[0, 1, 2, 4, 8])
    parser.add_argument("--null", default="init:3")
    parser.add_argument("--n-boot", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--threads", type=int, default=THREADS, help="torch threads of the child")
    parser.add_argument("--geometry-prompts", type=int, default=0,
                        help="geometry on the first N prompts of the mixed corpus, all of them (n_per_quintile 0): "
                             "N x (1 + copies) sequences; default: the built-in demo prompts, scored and sampled")
    parser.add_argument("--max-tokens", type=int, default=None,
                        help="geometry: keep the last N tokens of each prompt (RunConfig.max_tokens)")
    parser.add_argument("--prompts-file", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--vocab", type=int, default=1024)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--model-dir", type=Path, default=None, help="reuse a model built by an earlier run")
    parser.add_argument("--suite", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--out", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--result", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args)
        return 0
    started = time.perf_counter()
    temp = tempfile.mkdtemp(prefix="geomprobe-suite-forwards-")
    figures = {}
    try:
        model_dir = args.model_dir or Path(temp) / "pythia-410m-shaped"
        if not (model_dir / "config.json").exists():
            log(f"[build] random Pythia-410M-shaped GPT-NeoX (vocab {args.vocab}) -> {model_dir}")
            build_model(model_dir, args.vocab)
        prompts_file = Path(temp) / "geometry-prompts.jsonl"
        if args.geometry_prompts:
            from geomprobe.corpora import corpus_path

            lines = corpus_path("mixed").read_text().splitlines()
            if len(lines) < args.geometry_prompts:
                raise SystemExit(f"--geometry-prompts {args.geometry_prompts}: the mixed corpus has {len(lines)}")
            prompts_file.write_text("\n".join(lines[: args.geometry_prompts]) + "\n")
        for suite in args.suites.split(","):
            result = Path(temp) / f"{suite}.json"
            command = [sys.executable, __file__, "--child", "--suite", suite, "--model-dir", str(model_dir),
                       "--out", str(Path(temp) / f"runs-{suite}"), "--result", str(result),
                       "--n-per-k", str(args.n_per_k), "--k", ",".join(map(str, args.k)), "--null", args.null,
                       "--n-boot", str(args.n_boot), "--batch-size", str(args.batch_size),
                       "--rounds", str(args.rounds), "--threads", str(args.threads),
                       "--geometry-prompts", str(args.geometry_prompts), "--prompts-file", str(prompts_file),
                       *(["--max-tokens", str(args.max_tokens)] if args.max_tokens else [])]
            env = {**os.environ, "OMP_NUM_THREADS": str(args.threads), "HF_HUB_OFFLINE": "1",
                   "TOKENIZERS_PARALLELISM": "false"}
            subprocess.run(command, env=env, check=True)
            figures[suite] = json.loads(result.read_text())
    finally:
        shutil.rmtree(temp, ignore_errors=True)
    from importlib.metadata import version

    print(f"suite wall time against the bare forwards it needs: random Pythia-410M-shaped GPT-NeoX (24 layers, vocab "
          f"{args.vocab}), float32, CPU, torch threads {args.threads}; null {args.null}; least of {args.rounds} round(s)")
    print(f"{'suite':10}{'batches':>8}{'seqs':>6}{'suite s':>9}{'forwards s':>11}{'nulls s':>8}{'rest s':>8}{'bare s':>8}"
          f"{'ratio':>7}  target <= {TARGET}x")
    summary = {}
    for suite, figure in figures.items():
        rounds = figure["rounds"]
        suite_s = min(r["suite_s"] for r in rounds)
        inside = min(r["inside_run_batch_s"] for r in rounds)
        builds = min(r["null_builds_s"] for r in rounds)
        bare_s = min(r["bare_s"] for r in rounds)
        ratio = suite_s / bare_s
        summary[suite] = {"suite_s": suite_s, "inside_run_batch_s": inside, "bare_s": bare_s, "ratio": ratio,
                          "forwards_ratio": inside / bare_s, "null_builds_s": builds,
                          "without_null_builds_ratio": (suite_s - builds) / bare_s, "met": ratio <= TARGET, **{
                              k: rounds[0][k] for k in ("n_batches", "n_sequences", "n_tokens", "n_padded_tokens")}}
        print(f"{suite:10}{rounds[0]['n_batches']:8d}{rounds[0]['n_sequences']:6d}{suite_s:9.1f}{inside:11.1f}"
              f"{builds:8.1f}{suite_s - inside - builds:8.1f}{bare_s:8.1f}{ratio:7.3f}  "
              f"{'met' if ratio <= TARGET else 'NOT met'}")
    report = {"summary": summary, "raw": figures,
              "settings": {k: getattr(args, k) for k in ("suites", "n_per_k", "k", "null", "n_boot", "batch_size",
                                                         "rounds", "vocab", "threads", "geometry_prompts",
                                                         "max_tokens")},
              "total_s": time.perf_counter() - started,
              "env": {"python": platform.python_version(), "torch": version("torch"),
                      "transformers": version("transformers"), "cpus": os.cpu_count(), "threads": args.threads,
                      "date": date.today().isoformat(), "load_average": os.getloadavg()},
              "command": " ".join([".venv/bin/python", "benchmarks/suite_forwards.py", *(argv or sys.argv[1:])])}
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    print(f"total {report['total_s']:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
