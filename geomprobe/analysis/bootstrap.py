"""Bootstrap confidence intervals over units (prompts), seeded: BCa where it works, percentile otherwise
(METHODS.md section 2.3).

    mean, low, high, method = bootstrap_mean_interval(samples, n_boot=1000, seed=0)   # method "BCa"
    low, high, method = bca_interval(estimate, boot, jackknife)                      # any statistic
    intervals = bootstrap_rows(statistic, n_rows, n_boot, rng)   # scipy.stats.bootstrap over row indices
    low, high, method = jackknife_interval(estimate, jackknife)                      # method "jackknife"
    jackknife = grouped_jackknife(statistic_of_kept_rows, n)                        # leave-out values for BCa
    low, high, method = stratified_bca_interval(estimate, boot, [jack_k0, jack_k1])  # resampled per stratum

BCa (bias-corrected and accelerated; Efron & Tibshirani 1993, sections 14.3 and 15.4; the formulas
of scipy.stats.bootstrap(method="BCa")) moves the percentile interval's quantile levels by the
bootstrap distribution's median bias z0 = Phi^-1(share of resamples below the estimate, ties
counted half) and by the acceleration a = sum d^3 / (6 (sum d^2)^1.5), d_i = mean(jackknife) -
jackknife_i. The percentile interval is used instead, and its name recorded, when BCa is
undefined or unsupported by the resamples: a non-finite resample or jackknife value, every
resample on one side of the estimate (z0 infinite), a jackknife with no spread (a = 0 / 0), or
adjusted levels so far out that an end falls between the two smallest or the two largest
resamples (R boot's warning "extreme order statistics used as endpoints").

The acceleration needs one leave-out value per unit; with many units (a SULA run has 1,250 prompts)
`grouped_jackknife` leaves out at most JACKKNIFE_GROUPS interleaved groups instead (Efron and
Narasimhan's grouped jackknife, bcaboot::bcajack's `m`), which estimates the same a. A bootstrap
that resamples strata separately (prompts within each k) takes one jackknife per stratum:
`stratified_bca_interval`, with scipy.stats.bootstrap's multi-sample acceleration.

BCa cannot pull an interval back onto its estimate. Its ends are the bootstrap quantiles at
Phi(z0 + (z0 +- z) / (1 - a (z0 +- z))) and the estimate is the quantile at Phi(z0), so (while
1 - a (z0 +- z) > 0) it contains the estimate exactly when |z0| <= z, which is when the percentile
interval does: BCa reads resamples that sit to one side of the estimate as a bias of the estimate
and moves the interval across it, to the other side, and once |z0| > z its far end needs
quantiles beyond the extreme resamples, where the percentile fallback takes over.
`excludes_estimate_note` says so on an interval that misses its estimate.

Limit (measured, see tests/analysis/test_intervals.py): BCa corrects a bias of a fraction of the bootstrap
spread. The PCA ratios of the value manifold with n prompts << p columns are biased by more:
duplicated rows make a resample's spectrum less isotropic (pc1 and pc12 up, pr down, by 1 to 3.5
bootstrap standard deviations on all-MiniLM-L6-v2), and then neither BCa nor percentile
intervals reliably contain their estimate. `jackknife_interval` (leave-one-out, no duplicated
rows) is the alternative there: value_manifold(..., ci="jackknife").
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import numpy as np

from geomprobe.analysis.estimate import Estimate, estimate
from geomprobe.errors import AnalysisError

BCA, PERCENTILE, JACKKNIFE = "BCa", "percentile", "jackknife"
NO_INTERVAL = "none"  # no finite resample: the interval is [None, None]
JACKKNIFE_GROUPS = 100  # at most this many leave-out groups for BCa's acceleration (grouped_jackknife)
# at most this many resampled values held at once by a bootstrap (resample_chunks): 2M, 16 MiB of
# float64, so that memory stays flat in the number of units (a [1000, 100k] draw would be 800 MB)
RESAMPLE_BUDGET = 1 << 21


def chunk_rows(n_boot: int, elements_per_resample: int, budget: int | None = None) -> int:
    """How many resamples of `elements_per_resample` values fit in `budget` (RESAMPLE_BUDGET): at
    least 1, at most n_boot."""
    budget = RESAMPLE_BUDGET if budget is None else budget
    return max(1, min(max(n_boot, 1), budget // max(elements_per_resample, 1)))


def resample_chunks(rng: np.random.Generator, n: int, n_boot: int, elements_per_unit: int = 1):
    """Index arrays [c, n] into n units, c resamples at a time, such that their concatenation is
    exactly rng.integers(0, n, size=(n_boot, n)) (numpy's bounded draws are sequential in the
    generator's stream, so chunking does not change them): a bootstrap reduces each chunk before
    drawing the next and never holds [n_boot, n]. `elements_per_unit`: values a resampled unit
    carries (columns, layers), so that c * n * elements_per_unit stays within RESAMPLE_BUDGET."""
    for rows in chunk_sizes(n_boot, n * elements_per_unit):
        yield rng.integers(0, n, size=(rows, n))


def chunk_sizes(n_boot: int, elements_per_resample: int):
    """The sizes of the chunks n_boot resamples are drawn in (resample_chunks): chunk_rows each,
    the last one the rest; sum n_boot."""
    rows = chunk_rows(n_boot, elements_per_resample)
    for start in range(0, n_boot, rows):
        yield min(rows, n_boot - start)


def _percentile(boot: np.ndarray, level: float) -> tuple[float | None, float | None, str]:
    boot = boot[np.isfinite(boot)]
    if boot.size == 0:
        return None, None, NO_INTERVAL
    tail = 100 * (1 - level) / 2
    low, high = np.percentile(boot, [tail, 100 - tail])
    return float(low), float(high), PERCENTILE


def _extreme_ends(boot: np.ndarray, low: float, high: float) -> bool:
    """True when an end lies beyond the second smallest or second largest resample: the interval
    then rests on the extreme order statistics, i.e. on one or two resamples."""
    ordered = np.sort(boot)
    return bool(ordered.size < 3 or low < ordered[1] or high > ordered[-2])


def _share_below(boot: np.ndarray, value: float) -> float:
    """The share of resamples below `value`, ties counted half (BCa's z0 = Phi^-1 of it)."""
    return (np.count_nonzero(boot < value) + np.count_nonzero(boot <= value)) / (2 * boot.size)


def bca_interval(value, boot, jackknife, level: float = 0.95) -> tuple[float | None, float | None, str]:
    """(low, high, method) of a statistic from its estimate `value`, its bootstrap distribution
    `boot` [n_boot] and its leave-one-out (or leave-group-out, `grouped_jackknife`) values
    `jackknife` [n]: BCa, or percentile where BCa is undefined (see the module docstring);
    (None, None, "none") when no resample is finite."""
    return stratified_bca_interval(value, boot, [jackknife], level)


def stratified_bca_interval(value, boot, jackknifes, level: float = 0.95) -> tuple[float | None, float | None, str]:
    """bca_interval for a bootstrap that resamples S strata (or samples) independently: `jackknifes`
    holds one array of leave-out values per stratum, and the acceleration is scipy.stats.bootstrap's
    for several samples, a = sum_s sum_i U_si^3 / n_s^3 / (6 (sum_s sum_i U_si^2 / n_s^2)^1.5) with
    U_si = (n_s - 1)(mean_s - t_si), which for one stratum is sum d^3 / (6 (sum d^2)^1.5)."""
    boot = np.asarray(boot, dtype=np.float64).reshape(-1)
    groups = [np.asarray(j, dtype=np.float64).reshape(-1) for j in jackknifes]
    value = float(value) if value is not None else math.nan
    finite = all(np.isfinite(j).all() and j.size for j in groups)
    if not (math.isfinite(value) and np.isfinite(boot).all() and finite and boot.size and groups):
        return _percentile(boot, level)
    share = _share_below(boot, value)
    spreads = [j.mean() - j for j in groups]
    scale = max(abs(value), max(float(np.abs(j).max()) for j in groups), 1e-300)
    if not 0 < share < 1 or max(float(np.abs(d).max()) for d in spreads) <= 1e-12 * scale:
        return _percentile(boot, level)
    from scipy.special import ndtr, ndtri

    z0 = ndtri(share)
    if len(spreads) == 1:
        acceleration = (spreads[0]**3).sum() / (6 * (spreads[0]**2).sum() ** 1.5)
    else:
        influence = [(d.size - 1) * d for d in spreads]
        cubes = sum((u**3).sum() / u.size**3 for u in influence)
        squares = sum((u**2).sum() / u.size**2 for u in influence)
        acceleration = cubes / (6 * squares**1.5)
    z = z0 + ndtri(np.array([(1 - level) / 2, (1 + level) / 2]))
    levels = ndtr(z0 + z / (1 - acceleration * z))
    if not np.isfinite(levels).all():
        return _percentile(boot, level)
    low, high = np.quantile(boot, levels)
    if _extreme_ends(boot, low, high):
        return _percentile(boot, level)
    return float(low), float(high), BCA


def jackknife_groups(n: int, max_groups: int = JACKKNIFE_GROUPS) -> list[np.ndarray]:
    """The index sets a jackknife leaves out, one at a time: each of the n units alone when
    n <= max_groups, else max_groups interleaved groups (unit i in group i mod max_groups, so that
    units in a meaningful order, such as SULA's k-major prompts, spread over every group)."""
    if n <= max_groups:
        return [np.array([i]) for i in range(n)]
    return [np.arange(g, n, max_groups) for g in range(max_groups)]


def grouped_jackknife(statistic: Callable[[np.ndarray], float], n: int,
                      max_groups: int = JACKKNIFE_GROUPS) -> np.ndarray:
    """[G] statistic(kept rows) with each group of `jackknife_groups(n, max_groups)` left out in
    turn: the leave-one-out values for n <= max_groups, a grouped jackknife otherwise (what BCa's
    acceleration needs; Efron and Narasimhan 2020, bcaboot::bcajack). NaN where the statistic is
    undefined without that group."""
    rows = np.arange(n)
    return np.array([float(statistic(np.delete(rows, left_out))) for left_out in jackknife_groups(n, max_groups)])


def grouped_jackknife_rows(statistic: Callable[[np.ndarray], np.ndarray], n: int,
                           max_groups: int = JACKKNIFE_GROUPS) -> np.ndarray:
    """grouped_jackknife for a statistic that takes many samples at once: statistic(kept int [b, m])
    -> float [b], one value per row of kept indices. The groups of one size (at most two sizes)
    go in one call, so a vectorised statistic costs about one evaluation on [G, n] instead of G
    Python-level calls; same values as grouped_jackknife (row order of kept as np.delete gives it)."""
    groups = jackknife_groups(n, max_groups)
    out = np.empty(len(groups))
    rows = np.arange(n)
    by_size: dict[int, list[int]] = {}
    for index, group in enumerate(groups):
        by_size.setdefault(len(group), []).append(index)
    for members in by_size.values():
        kept = np.stack([np.delete(rows, groups[index]) for index in members])
        out[members] = np.asarray(statistic(kept), dtype=np.float64).reshape(-1)
    return out


def excludes_estimate_note(value, low, high) -> str | None:
    """A note for an interval [low, high] that does not contain its estimate (None when it does, or
    when either is undefined): why, and that no bias correction of the same resamples fixes it."""
    if value is None or low is None or high is None or not all(map(math.isfinite, (value, low, high))):
        return None
    if low <= value <= high:
        return None
    side = "above" if low > value else "below"
    return (f"the interval lies {side} its estimate: the resamples are biased by more than their spread "
            f"(ties or duplicated rows under resampling), and neither BCa nor the percentile interval can "
            f"contain the estimate then (METHODS.md section 2.3); read the estimate, not the interval's ends")


def jackknife_interval(value, jackknife, level: float = 0.95) -> tuple[float | None, float | None, str]:
    """(low, high, "jackknife"): value -/+ z se, se = sqrt((n-1)/n sum (t_i - mean t)^2) over the n
    leave-one-out values t_i, z the normal quantile of `level`; (None, None, "none") if undefined."""
    jackknife = np.asarray(jackknife, dtype=np.float64).reshape(-1)
    value = float(value) if value is not None else math.nan
    if jackknife.size < 2 or not (math.isfinite(value) and np.isfinite(jackknife).all()):
        return None, None, NO_INTERVAL
    n = jackknife.size
    se = math.sqrt((n - 1) / n * float(((jackknife - jackknife.mean()) ** 2).sum()))
    from scipy.special import ndtri

    half = float(ndtri((1 + level) / 2)) * se
    return value - half, value + half, JACKKNIFE


def bootstrap_rows(statistic: Callable[[np.ndarray], np.ndarray], n_rows: int, n_boot: int,
                   rng: np.random.Generator, level: float = 0.95) -> list[tuple[float | None, float | None, str]]:
    """Intervals of a k-valued statistic of a sample of `n_rows` units, by scipy.stats.bootstrap
    (method="BCa") resampling the row indices: statistic(rows int [m]) -> float [k] (NaN where
    undefined for that resample). One (low, high, method) per output; percentile (from the same
    resamples) where scipy's BCa is NaN, z0 is infinite or an end is an extreme resample, as in
    `bca_interval`."""
    from scipy.stats import bootstrap

    def on_rows(rows, axis=-1):
        rows = np.asarray(rows).astype(np.int64)
        flat = rows.reshape(-1, rows.shape[-1])
        out = np.stack([np.asarray(statistic(r), dtype=np.float64) for r in flat], axis=-1)  # [k, m]
        return out.reshape(out.shape[0], *rows.shape[:-1])

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # DegenerateDataWarning, 0/0 in the acceleration: handled below
        result = bootstrap((np.arange(n_rows),), on_rows, n_resamples=n_boot, method="BCa",
                           confidence_level=level, vectorized=True, rng=rng,
                           batch=chunk_rows(n_boot, n_rows))  # resamples drawn a batch at a time
        values = on_rows(np.arange(n_rows))
    boot = np.atleast_2d(result.bootstrap_distribution)
    lows = np.atleast_1d(result.confidence_interval.low)
    highs = np.atleast_1d(result.confidence_interval.high)
    intervals = []
    for value, draws, low, high in zip(values, boot, lows, highs):
        if (np.isfinite(draws).all() and np.isfinite([value, low, high]).all()
                and 0 < _share_below(draws, value) < 1 and not _extreme_ends(draws, low, high)):
            intervals.append((float(low), float(high), BCA))
        else:
            intervals.append(_percentile(draws, level))
    return intervals


def bootstrap_mean_interval(samples, n_boot: int = 1000, seed: int = 0,
                            level: float = 0.95) -> tuple[float, float, float, str]:
    """(mean, low, high, method) for the mean of 1-d `samples`, resampling them with replacement
    (rng = np.random.default_rng(seed), indices [n_boot, n] drawn as scipy.stats.bootstrap draws
    them, a chunk at a time: resample_chunks). BCa with the closed-form jackknife of a mean, (sum - x_i) / (n - 1), so it equals
    scipy.stats.bootstrap(method="BCa") with the same rng, about 3x faster; percentile where BCa is
    undefined (e.g. constant samples). NaN bounds when no resample is finite."""
    return bootstrap_mean_intervals([samples], n_boot=n_boot, seed=seed, level=level)[0]


def bootstrap_mean_intervals(columns, n_boot: int = 1000, seed: int = 0,
                             level: float = 0.95) -> list[tuple[float, float, float, str]]:
    """bootstrap_mean_interval of each 1-d array of `columns` (the same length: paired samples of
    the same units) with the same seed, from one draw of resampled units: each result is the
    one bootstrap_mean_interval(column, n_boot, seed) gives, at the cost of one draw."""
    columns = [np.asarray(samples, dtype=np.float64) for samples in columns]
    for samples in columns:
        if samples.ndim != 1:
            raise AnalysisError(f"a bootstrap mean takes a 1-d array of samples, got shape {samples.shape}")
    n = len(columns[0])
    if any(len(samples) != n for samples in columns):
        raise AnalysisError(f"paired bootstrap means need columns of one length, got {[len(c) for c in columns]}")
    if n < 2:
        raise AnalysisError(f"a bootstrap interval needs at least 2 samples, got {n}")
    rng = np.random.default_rng(seed)
    means = [[] for _ in columns]
    for idx in resample_chunks(rng, n, n_boot, len(columns)):
        for column, samples in zip(means, columns):
            column.append(samples[idx].mean(axis=1))
    out = []
    for samples, boot in zip(columns, means):
        mean = samples.mean()
        low, high, method = bca_interval(mean, np.concatenate(boot) if boot else np.zeros(0),
                                         (samples.sum() - samples) / (n - 1), level)
        out.append((float(mean), math.nan if low is None else low, math.nan if high is None else high, method))
    return out


def bootstrap_mean_ci(samples, n_boot: int = 1000, seed: int = 0, level: float = 0.95) -> tuple[float, float, float]:
    """(mean, low, high): bootstrap_mean_interval without the name of the method."""
    return bootstrap_mean_interval(samples, n_boot=n_boot, seed=seed, level=level)[:3]


def mean_method(unit: str, n_boot: int, ci_method: str = BCA) -> str:
    """The `method` of an Estimate made by bootstrap_mean_estimate."""
    return f"mean over {unit}, {ci_method} bootstrap 95% CI ({n_boot} resamples of the {unit})"


def bootstrap_mean_estimate(samples, n_boot: int = 1000, seed: int = 0, unit: str = "prompts") -> Estimate:
    """bootstrap_mean_interval as an Estimate {"value", "ci95", "method", "n"}; n = len(samples);
    the method string names the interval actually used (BCa or percentile)."""
    mean, low, high, ci_method = bootstrap_mean_interval(samples, n_boot=n_boot, seed=seed)
    return estimate(mean, [low, high], mean_method(unit, n_boot, ci_method), len(np.asarray(samples)))
