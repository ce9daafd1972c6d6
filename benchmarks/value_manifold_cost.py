"""The geometry suite's value-manifold analysis against the number of prompts: the exact jackknife
by downdating one cross-product matrix against re-fitting each leave-one-out spectrum, and the
suite's seven value_manifold calls in all, at n = 100, 400, 1,600 and 6,400 prompts.

    .venv/bin/python benchmarks/value_manifold_cost.py                   # ~15-25 min on one core
    .venv/bin/python benchmarks/value_manifold_cost.py --n 100,400 --p 1024

Data: n x p Gaussian values with a planted rank-3 structure (the Pythia-410M width p = 1024 by
default: 16 heads x d_head 64, the last layer's final-token values). CPU seconds (process time) of:

  jackknife (exact)     leave_one_out_statistics(z): all n leave-one-out [pc1, pc12, pr]
  jackknife (re-fit)    the same by re-fitting standardise(X without row i) for each i, as before
                        issue 39; timed on --refit-rows rows spread over the sample and scaled to n
                        (each re-fit costs the same), so the large n take seconds, not hours
  largest difference    between the two on the rows re-fitted (must be rounding: under 1e-9)
  shuffle null          shuffle_null(z, 40): a profile layer's 40 column-permuted draws, for the first
                        matrix of its shape and seed, then for the next (another layer: from issue 39
                        item 6 the permutations are drawn once per shape and seed, and gathered)
  suite analysis        what the geometry suite runs on one model with manifold_ci="jackknife":
                        value_manifold at the last layer (n_null 200) and at 6 profile layers
                        (n_null 40), each with its jackknife, Gaussian null (drawn once per shape and
                        cached) and shuffle null

The seconds per 1,000 prompts show whether a cost grows linearly (constant) or faster.
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def planted(n: int, p: int, rng: np.random.Generator) -> np.ndarray:
    factors = rng.normal(size=(n, 3)) * np.array([6.0, 3.0, 2.0])
    return factors @ rng.normal(size=(3, p)) / np.sqrt(p) * 4 + rng.normal(size=(n, p))


def timed(call) -> tuple[float, object]:
    start = time.process_time()
    result = call()
    return time.process_time() - start, result


def suite_analysis(matrix: np.ndarray, entropy: np.ndarray) -> None:
    """The geometry suite's calls with its defaults (n_null 200; profile layers max(20, 200 // 5))."""
    from geomprobe.analysis.value_manifold import value_manifold

    value_manifold(matrix, entropy_bits=entropy, n_boot=1000, n_null=200, seed=0, ci="jackknife")
    for layer in range(6):
        value_manifold(matrix, entropy_bits=entropy, n_boot=200, n_null=40, seed=layer + 1, ci="jackknife")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=lambda s: [int(v) for v in s.split(",")], default=[100, 400, 1600, 6400])
    parser.add_argument("--p", type=int, default=1024, help="columns (heads x d_head)")
    parser.add_argument("--refit-rows", type=int, default=12, help="leave-one-out re-fits timed per n")
    parser.add_argument("--no-suite", action="store_true", help="time the jackknifes only")
    args = parser.parse_args()

    from geomprobe.analysis.value_manifold import (
        _resampled_statistics,
        leave_one_out_statistics,
        shuffle_null,
        standardise,
    )

    warm = standardise(planted(50, 16, np.random.default_rng(1)))[0]
    leave_one_out_statistics(warm)  # imports and first calls out of the timings

    print(f"p = {args.p}; CPU seconds (one process); per 1k = seconds per 1,000 prompts")
    print(f"{'n':>6} | {'jackknife exact':>15} | {'per 1k':>7} | {'re-fit (scaled)':>15} | {'per 1k':>7} | "
          f"{'exact/re-fit':>12} | {'max diff':>8} | {'shuffle 40, first':>17} | {'next':>6} | {'suite analysis':>14} | "
          f"{'per 1k':>7}")
    for n in args.n:
        rng = np.random.default_rng(n)
        matrix = planted(n, args.p, rng)
        entropy = rng.uniform(0, 5, size=n)
        z = standardise(matrix)[0]
        exact_s, exact = timed(lambda: leave_one_out_statistics(z))
        rows = np.unique(np.linspace(0, n - 1, min(n, args.refit_rows)).round().astype(int))
        refit_s, refit = timed(lambda: np.array([_resampled_statistics(z, np.delete(np.arange(n), row))
                                                 for row in rows]))
        refit_s *= n / len(rows)
        diff = float(np.nanmax(np.abs(exact[rows] - refit)))
        shuffle_s, _ = timed(lambda: shuffle_null(z, 40, seed=1))
        other = standardise(planted(n, args.p, rng))[0]
        next_s, _ = timed(lambda: shuffle_null(other, 40, seed=1))
        if args.no_suite:
            suite_s = float("nan")
        else:
            suite_s, _ = timed(lambda: suite_analysis(matrix, entropy))
        print(f"{n:>6} | {exact_s:>15.2f} | {exact_s / n * 1000:>7.2f} | {refit_s:>15.1f} | "
              f"{refit_s / n * 1000:>7.1f} | {exact_s / refit_s:>12.4f} | {diff:>8.1e} | {shuffle_s:>17.2f} | {next_s:>6.2f} | "
              f"{suite_s:>14.1f} | "
              f"{suite_s / n * 1000:>7.1f}", flush=True)


if __name__ == "__main__":
    main()
