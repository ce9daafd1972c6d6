"""Does a suite with untrained copies peak where `geomprobe plan` says, with one copy alive at a time?

    .venv/bin/python benchmarks/null_memory.py                          # sula and geometry, init:2 (~5-10 min)
    .venv/bin/python benchmarks/null_memory.py --suites sula --null init:3
    .venv/bin/python benchmarks/null_memory.py --json out.json          # also keep the raw figures

Model: a randomly initialised GPT-NeoX of Pythia-410M's published shape (24 layers, d_model 1024,
16 heads, d_mlp 4096; float32) with a 1,024-token vocabulary so that the built-in tiny-neox
tokenizer fits (benchmarks/suite_cost.py's build_model), saved to a temporary directory.

For each suite, `geomprobe run --model DIR --suite S --null N --device cpu` runs in a child
process (torch 2 threads) with small workloads (sula --n-per-k 4, geometry --n-per-quintile 4 on the
254 candidates of the math corpus, --n-boot 100), and its peak RSS is the child's ru_maxrss (os.wait4). The plan of the same
command (geomprobe.plan.plan, the same options) gives its memory phases; the one with a null copy
beside the model is what the run should peak at. On a CPU a phase includes the process itself
(geomprobe.plan.PROCESS_BYTES); the baseline measured here is the RSS of a child that imports
torch, transformers, geomprobe's suites and the model's modeling code and loads no weights, which
is what that constant stands for. Reported: peak RSS, the plan's phase, peak / phase (1.0 when the
plan is exact; target within 10%), and the baseline beside PROCESS_BYTES. A second copy alive
would add the model's weights again (1.2 GiB here).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

THREADS = 2
WORKLOADS = {"sula": ["--n-per-k", "4", "--n-boot", "100"],
             "geometry": ["--n-per-quintile", "4", "--n-boot", "100", "--n-null", "20", "--corpus", "math"]}
PLAN_OPTIONS = {"sula": {"n_per_k": 4, "n_boot": 100}, "geometry": {"n_per_quintile": 4, "n_boot": 100, "n_null": 20,
                                                                "corpus": "math"}}


def _wait_rss(argv: list[str], env: dict, stderr_path: Path) -> tuple[float, float, int]:
    """(peak RSS MiB, seconds, exit code) of a child command."""
    start = time.perf_counter()
    with open(stderr_path, "w") as err:
        process = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(process.pid, 0)  # the child's own rusage (Popen.wait would discard it)
        process.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_maxrss / 1024, time.perf_counter() - start, process.returncode


def child(what: str, where: str, vocab: int) -> None:
    if what == "build":
        from suite_cost import build_model

        print(json.dumps(build_model(Path(where), vocab)))
        return
    from geomprobe.plan import cached_tokenizer, plan, resolve_target

    path, suite, null = where.split(",")
    # the prompts counted with the model's tokenizer, as `geomprobe plan` and the runner's preflight count them
    p = plan(path, suite, device="cpu", null=null, tokenizer=cached_tokenizer(resolve_target(path)),
             **PLAN_OPTIONS[suite])
    print(json.dumps({"phases": {phase.name: phase.device_bytes / 2**20 for phase in p.phases},
                      "weights_mib": p.weights_bytes / 2**20}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--suites", default="sula,geometry")
    parser.add_argument("--null", default="init:2")
    parser.add_argument("--vocab", type=int, default=1024)
    parser.add_argument("--json", help="write the raw figures here")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)  # build PATH | plan PATH,SUITE,NULL
    args = parser.parse_args()
    if args.child:
        return child(*args.child, vocab=args.vocab)
    # the parent stays small and builds nothing: a child's ru_maxrss starts at its parent's RSS
    # when forked (Linux keeps the high-water mark across exec), so the model is built, and the
    # plan made, in children of their own
    env = {**os.environ, "OMP_NUM_THREADS": str(THREADS), "TOKENIZERS_PARALLELISM": "false"}
    rows = []
    with tempfile.TemporaryDirectory(prefix="gp-null-memory-") as work:
        path = Path(work) / "model"
        info = json.loads(subprocess.run([sys.executable, __file__, "--vocab", str(args.vocab), "--child", "build",
                                          str(path)], env=env, check=True, capture_output=True, text=True)
                          .stdout.splitlines()[-1])
        baseline, _, code = _wait_rss([sys.executable, "-c", "import torch, transformers, geomprobe.runner, "
                                       "geomprobe.suites.sula, geomprobe.suites.geometry, transformers.modeling_utils; "
                                       "from transformers import AutoModelForCausalLM, GPTNeoXForCausalLM, "
                                       f"AutoTokenizer; AutoTokenizer.from_pretrained({str(path)!r})"], env,
                                      Path(work) / "baseline.txt")
        from geomprobe.plan import PROCESS_BYTES

        print(f"model: {info}; process baseline (imports, modeling code, tokenizer): {baseline:.0f} MiB "
              f"(geomprobe.plan.PROCESS_BYTES {PROCESS_BYTES / 2**20:.0f} MiB)", flush=True)
        for suite in args.suites.split(","):
            planned = json.loads(subprocess.run([sys.executable, __file__, "--child", "plan",
                                                 f"{path},{suite},{args.null}"], env=env, check=True,
                                                capture_output=True, text=True).stdout.splitlines()[-1])
            phases, weights = planned["phases"], planned["weights_mib"]
            with_null = max(phases.values())
            argv = [sys.executable, "-m", "geomprobe", "run", "--model", str(path), "--suite", suite, "--null",
                    args.null, "--device", "cpu", "--out", str(Path(work) / f"run-{suite}"), "--quiet",
                    *WORKLOADS[suite]]
            peak, seconds, code = _wait_rss(argv, env, Path(work) / f"{suite}.txt")
            if code:
                sys.exit(f"{suite} failed:\n{(Path(work) / f'{suite}.txt').read_text()[-3000:]}")
            ratio = peak / with_null
            rows.append({"suite": suite, "null": args.null, "peak_rss_mib": peak, "baseline_mib": baseline,
                         "plan_phases_mib": phases, "plan_peak_mib": with_null, "ratio": ratio, "seconds": seconds,
                         "weights_mib": weights})
            print(f"{suite}: peak RSS {peak:.0f} MiB in {seconds:.0f} s; plan {with_null:.0f} MiB "
                  f"(weights {weights:.0f}); peak / plan = {ratio:.3f}", flush=True)
    print("\n| suite | --null | peak RSS MiB | baseline MiB | plan's peak phase MiB | peak / plan | s |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['suite']} | {r['null']} | {r['peak_rss_mib']:.0f} | {r['baseline_mib']:.0f} | "
              f"{r['plan_peak_mib']:.0f} | {r['ratio']:.3f} | {r['seconds']:.0f} |")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
