"""Bootstrap confidence intervals (percentile method, seeded)."""

from __future__ import annotations

import numpy as np

from geomprobe.analysis.estimate import Estimate, estimate
from geomprobe.errors import AnalysisError


def bootstrap_mean_ci(samples, n_boot: int = 1000, seed: int = 0, level: float = 0.95) -> tuple[float, float, float]:
    """(mean, low, high) of the mean of `samples` along axis 0, resampling rows with replacement."""
    samples = np.asarray(samples, dtype=np.float64)
    if len(samples) < 2:
        raise AnalysisError(f"a bootstrap interval needs at least 2 samples, got {len(samples)}")
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(samples), size=(n_boot, len(samples)))
    means = samples[idx].mean(axis=1)
    tail = 100 * (1 - level) / 2
    low, high = np.percentile(means, [tail, 100 - tail])
    return float(samples.mean()), float(low), float(high)


def mean_method(unit: str, n_boot: int) -> str:
    """The `method` of an Estimate made by bootstrap_mean_estimate."""
    return f"mean over {unit}, percentile bootstrap 95% CI ({n_boot} resamples of the {unit})"


def bootstrap_mean_estimate(samples, n_boot: int = 1000, seed: int = 0, unit: str = "prompts") -> Estimate:
    """bootstrap_mean_ci as an Estimate {"value", "ci95", "method", "n"}; n = len(samples)."""
    mean, low, high = bootstrap_mean_ci(samples, n_boot=n_boot, seed=seed)
    return estimate(mean, [low, high], mean_method(unit, n_boot), len(np.asarray(samples)))
