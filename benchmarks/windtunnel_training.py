"""Wind-tunnel training speed: held-out entropy MAE reached against wall-clock time on this
machine, for the default transformer on the SULA tunnel and on bijection V=20.

    .venv/bin/python benchmarks/windtunnel_training.py                 # SULA 3 min, bijection 20 min
    .venv/bin/python benchmarks/windtunnel_training.py --sula-minutes 2 --bijection-minutes 5

For each task it trains the built-in recipe (geomprobe.windtunnel.builtin.RECIPES, cross-entropy
against the exact predictive) and, for comparison, the same recipe on sampled answers, then
evaluates every checkpoint on 512 held-out sequences. Prints steps per second and MAE at each
checkpoint; targets: SULA below 0.01 bits within 3 minutes, bijection below 0.01 within 20.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import time
from pathlib import Path

import torch

from geomprobe.windtunnel.builtin import RECIPES
from geomprobe.windtunnel.checkpoints import learning_curve
from geomprobe.windtunnel.train import train


def run(task: str, minutes: float, target: str, out: Path) -> dict:
    config, _ = RECIPES[task]
    config = dataclasses.replace(config, steps=None, minutes=minutes, target=target, n_checkpoints=8,
                                 eval_sequences=1024)
    run_dir = out / f"{task}-{target}-{minutes}m"
    metrics = train(config, run_dir, overwrite=True)  # a benchmark times a fresh training
    return {"task": task, "target": target, "minutes": minutes, "steps": metrics["steps"],
            "steps_per_second": metrics["steps_per_second"], "n_params": metrics["n_params"],
            "final": {k: v["entropy_mae_bits"] for k, v in metrics["eval"].items()},
            "curve": learning_curve(run_dir)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sula-minutes", type=float, default=3.0)
    parser.add_argument("--bijection-minutes", type=float, default=20.0)
    parser.add_argument("--targets", default="bayes,sampled")
    parser.add_argument("--out", default="runs/bench-windtunnel")
    args = parser.parse_args()
    torch.set_num_threads(os.cpu_count() or 1)
    out = Path(args.out)
    results = []
    started = time.time()
    for task, minutes in (("sula", args.sula_minutes), ("bijection", args.bijection_minutes)):
        for target in args.targets.split(","):
            results.append(run(task, minutes, target, out))
    (out / "results.json").write_text(json.dumps(results, indent=2))
    print(f"\nwind-tunnel training on {os.cpu_count()} CPU cores, torch threads {torch.get_num_threads()}, "
          f"total {time.time() - started:.0f} s")
    for row in results:
        print(f"\n{row['task']} target={row['target']} {row['minutes']} min: {row['steps']} steps, "
              f"{row['steps_per_second']:.2f} steps/s, {row['n_params']:,} params, final held-out MAE "
              f"{row['final']['train_length']:.4f} bits")
        for point in row["curve"]:
            print(f"  {point['elapsed_s']:7.1f} s  step {point['step']:6d}  MAE {point['entropy_mae_bits']:.4f} bits  "
                  f"KL {point['kl_bits']:.4f}")


if __name__ == "__main__":
    main()
