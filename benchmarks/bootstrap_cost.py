"""The suites' resampling statistics against the number of prompts: time and peak traced memory
per call at n = 1k, 10k and 100k, so that linear cost (a constant time per 1,000 prompts) and flat
memory (the resamples are drawn in chunks of geomprobe.analysis.bootstrap.RESAMPLE_BUDGET values)
can be read off.

    .venv/bin/python benchmarks/bootstrap_cost.py                # ~2-4 min on one core
    .venv/bin/python benchmarks/bootstrap_cost.py --n 1000,10000 --n-boot 1000

Statistics (n_boot 1000 each, Gaussian data with a real correlation): the extract suite's
bootstrap_mean_intervals over 9 columns (2L+1 for a 4-layer model), sula_metrics.correlation
(Spearman, percentile bootstrap), ablation_metrics.pearson_change, confounds.rank_partial_correlation
(one covariate, 5 strata) and confounds.within_stratum_spearman (n_perm 999). Each is called once
at every n for its CPU time, then again under tracemalloc for its peak (numpy and Python memory).
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np


def cases(n: int, n_boot: int, rng: np.random.Generator):
    from geomprobe.analysis.ablation_metrics import pearson_change
    from geomprobe.analysis.bootstrap import bootstrap_mean_intervals
    from geomprobe.analysis.confounds import rank_partial_correlation, within_stratum_spearman
    from geomprobe.analysis.sula_metrics import correlation

    x = rng.normal(size=n)
    y = 0.5 * x + rng.normal(size=n)
    z = rng.normal(size=n)
    strata = rng.integers(0, 5, size=n)
    columns = rng.normal(size=(9, n))
    return {
        "bootstrap_mean_intervals (9 columns)": lambda: bootstrap_mean_intervals(list(columns), n_boot=n_boot),
        "sula correlation (Spearman)": lambda: correlation(x, y, n_boot=n_boot),
        "ablation pearson_change": lambda: pearson_change(x, y, y + 0.1 * z, n_boot=n_boot),
        "rank_partial_correlation": lambda: rank_partial_correlation(x, y, covariates=[z], strata=strata,
                                                                     n_boot=n_boot),
        "within_stratum_spearman": lambda: within_stratum_spearman(x, y, strata, n_boot=n_boot),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=lambda s: [int(v) for v in s.split(",")], default=[1000, 10000, 100000])
    parser.add_argument("--n-boot", type=int, default=1000)
    args = parser.parse_args()
    for call in cases(200, 20, np.random.default_rng(0)).values():  # warm-up: imports and first calls
        call()
    rows: dict[str, list[tuple[float, float]]] = {}
    for n in args.n:
        for name, call in cases(n, args.n_boot, np.random.default_rng(0)).items():
            start = time.process_time()
            call()
            seconds = time.process_time() - start
            tracemalloc.start()  # a second call for the memory: tracing slows the first
            call()
            peak = tracemalloc.get_traced_memory()[1] / 2**20
            tracemalloc.stop()
            rows.setdefault(name, []).append((seconds, peak))
    head = " | ".join(f"n={n:,}: s, MiB" for n in args.n)
    print(f"| statistic | {head} | s per 1k prompts at the largest n / at the smallest |")
    print("|---|" + "---:|" * (len(args.n) + 1))
    for name, figures in rows.items():
        cells = " | ".join(f"{s:.2f}, {m:.0f}" for s, m in figures)
        per = [s / n * 1000 for (s, _), n in zip(figures, args.n, strict=True)]
        print(f"| {name} | {cells} | {per[-1] / per[0]:.2f} |", flush=True)


if __name__ == "__main__":
    main()
