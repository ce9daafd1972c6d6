"""Paper II's EM experiment: does a larger step on the values (the "M-step") speed up learning?

A sticky Markov chain over 8 symbols (self-transition 0.3, the other transitions proportional to
1 / circular distance); inputs are a fixed per-symbol mean in R^20 (drawn once per seed from
N(0, I)) plus N(0, I) noise; one causal attention head (d_k 10, d_v 15, a linear readout to the
8 symbols, no residual, no biases, all weights N(0, 0.1^2)) predicts the next symbol; full-batch
training on one sequence of 2000 symbols. Plain SGD (lr 0.01 everywhere) against "EM-like" SGD
(lr 0.1 on W_V, 0.01 elsewhere), from the same data and initialisation for each seed. Reported:
the steps the EM-like run needs to reach SGD's final loss, next to paper II's 430 of 1000 (about
2.3x), with paired tests over seeds.

    .venv/bin/python analyses/gradient_dynamics_em.py                      # 5 seeds, 1000 steps
    .venv/bin/python analyses/gradient_dynamics_em.py --seeds 0,1 --steps 200 --seq-len 500
    .venv/bin/python analyses/gradient_dynamics_em.py --json runs/em.json  # also write the numbers
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from geomprobe.gradient_dynamics import PAPER_II_EM, EMConfig, em_experiment


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    defaults = EMConfig()
    parser.add_argument("--seeds", default=",".join(str(s) for s in defaults.seeds))
    parser.add_argument("--steps", type=int, default=defaults.steps)
    parser.add_argument("--seq-len", type=int, default=defaults.seq_len)
    parser.add_argument("--lr", type=float, default=defaults.lr)
    parser.add_argument("--value-lr", type=float, default=defaults.value_lr_em, help="EM-like lr on W_V")
    parser.add_argument("--json", type=Path, default=None, help="also write the results (no loss curves) here")
    args = parser.parse_args()

    config = EMConfig(seeds=tuple(int(s) for s in args.seeds.split(",")), steps=args.steps, seq_len=args.seq_len,
                      lr=args.lr, value_lr_em=args.value_lr)
    start = time.time()

    def progress(seed):
        print(f"seed {seed.seed}: SGD {seed.sgd_final_loss:.4f}, EM-like {seed.em_final_loss:.4f}, EM-like reached "
              f"SGD's final loss at step {seed.em_steps_to_sgd_final} ({time.time() - start:.0f} s)", flush=True)

    result = em_experiment(config, progress=progress)
    print()
    print(result.table())
    print(f"\npaper II: EM-like reaches SGD's {PAPER_II_EM['sgd_steps']}-step loss in about "
          f"{PAPER_II_EM['em_steps_to_sgd_final']} steps (about {PAPER_II_EM['speedup']}x); here "
          f"{result.mean_em_steps:.0f} steps on average, {result.mean_speedup:.2f}x ({time.time() - start:.0f} s)")
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result.to_dict(), indent=2))


if __name__ == "__main__":
    main()
