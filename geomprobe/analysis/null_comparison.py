"""A statistic of the model against the same statistic of untrained null models. numpy only.

    cmp = compare_to_nulls(pc1_of, model_matrix, [null_matrix_0, null_matrix_1], higher_is_better=True)
    cmp["status"]        # "above untrained" | "indistinguishable from untrained" | "below untrained"
    cmp["difference"]    # Estimate: model - mean over nulls, paired bootstrap 95% CI over units

Two sources of chance are checked, and "above untrained" needs both to clear:
- the prompts (or layers, for weight statistics): the model and every null are measured on the
  same units, so each bootstrap resample draws one set of unit indices and applies it to all of
  them (a paired bootstrap); the CI of model - null mean must exclude 0 on the favourable side;
- the initialisation: untrained copies differ from seed to seed (value-manifold PC1 of one small
  model ranges over 0.27-0.36 across 4 seeds), and the model is compared with where one more
  untrained copy would fall, the t prediction interval null_mean +- t(N-1) s sqrt(1 + 1/N) over the
  N null values (N >= 2; with one null only the prompt CI is used, and the result says so).
"below untrained" is the mirror image; anything else is indistinguishable.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from geomprobe.analysis.estimate import estimate
from geomprobe.errors import AnalysisError

ABOVE, SAME, BELOW = "above untrained", "indistinguishable from untrained", "below untrained"


def compare_to_nulls(statistic: Callable[[np.ndarray], float], model: np.ndarray, nulls: Sequence[np.ndarray],
                     higher_is_better: bool = True, n_boot: int = 1000, seed: int = 0, unit: str = "prompts",
                     name: str = "", strata: np.ndarray | None = None) -> dict:
    """statistic(rows) -> float for a [n_units, ...] array (rows in any order, with repeats).
    model and each null: arrays with the same first axis (the same units in the same order).
    strata [n_units] (optional): resample within each stratum, keeping its size (e.g. two prompt
    sets whose statistics are subtracted)."""
    model = np.asarray(model)
    nulls = [np.asarray(n) for n in nulls]
    if not nulls:
        raise AnalysisError("compare_to_nulls needs at least one null model")
    n = len(model)
    if n < 2 or any(len(x) != n for x in nulls):
        raise AnalysisError(f"model and nulls need the same >= 2 {unit}, got {n} and {[len(x) for x in nulls]}")
    model_value = float(statistic(model))
    null_values = [float(statistic(x)) for x in nulls]
    point = model_value - float(np.mean(null_values))
    rng = np.random.default_rng(seed)
    groups = None if strata is None else [np.flatnonzero(np.asarray(strata) == g) for g in np.unique(strata)]
    diffs = []
    for _ in range(n_boot):
        index = (rng.integers(0, n, n) if groups is None
                 else np.concatenate([g[rng.integers(0, len(g), len(g))] for g in groups]))
        try:
            value = statistic(model[index]) - np.mean([statistic(x[index]) for x in nulls])
        except (AnalysisError, ValueError, np.linalg.LinAlgError):
            continue
        if np.isfinite(value):
            diffs.append(float(value))
    ci = [float(v) for v in np.percentile(diffs, [2.5, 97.5])] if len(diffs) >= 10 else [None, None]
    prediction = None
    if len(null_values) >= 2:
        from scipy.stats import t as student_t

        spread = float(np.std(null_values, ddof=1))
        half = float(student_t.ppf(0.975, len(null_values) - 1)) * spread * float(np.sqrt(1 + 1 / len(null_values)))
        prediction = [float(np.mean(null_values)) - half, float(np.mean(null_values)) + half]
    sign = 1.0 if higher_is_better else -1.0
    status = SAME
    if ci[0] is not None:
        low, high = sorted((sign * ci[0], sign * ci[1]))
        outside_high = prediction is None or sign * model_value > max(sign * prediction[0], sign * prediction[1])
        outside_low = prediction is None or sign * model_value < min(sign * prediction[0], sign * prediction[1])
        if low > 0 and outside_high:
            status = ABOVE
        elif high < 0 and outside_low:
            status = BELOW
    return {
        "statistic": name, "model": model_value, "nulls": null_values,
        "null_mean": float(np.mean(null_values)),
        "null_prediction_interval": prediction,
        "seed_check": ("95% t prediction interval of one more untrained copy, over the null values" if prediction
                       else "one null model: no seed-to-seed spread, only the prompt CI is checked"),
        "difference": estimate(point, ci, f"model - mean of {len(nulls)} null(s), paired percentile bootstrap 95% "
                                          f"CI over {unit} ({len(diffs)} of {n_boot} resamples usable)", n),
        "higher_is_better": higher_is_better, "status": status,
    }


def difference_text(cmp: dict, spec: str = "+.3f") -> str:
    """'+0.104 [+0.051, +0.154]': a comparison's difference and its CI, for console and report."""
    diff = cmp.get("difference") or {}
    ci = diff.get("ci95") or [None, None]
    interval = "" if ci[0] is None else f" [{ci[0]:{spec}}, {ci[1]:{spec}}]"
    value = diff.get("value")
    return ("n/a" if value is None else f"{value:{spec}}") + interval


def comparison_text(cmp: dict, spec: str = ".3f") -> str:
    """'model 0.359 vs untrained 0.277, 0.270, 0.216; difference +0.104 [+0.051, +0.154]:
    indistinguishable from untrained' (or why it was not measured)."""
    if cmp.get("status") == "not measured":
        return f"not measured ({cmp.get('note')})"
    nulls = ", ".join(f"{v:{spec}}" for v in cmp.get("nulls") or [])
    return (f"model {cmp['model']:{spec}} vs untrained {nulls}; difference {difference_text(cmp)}: "
            f"{cmp['status']}")


def explained_share(k: int) -> Callable[[np.ndarray], float]:
    """rows [n, p] -> share of variance of the first k principal components (PC1: k = 1)."""
    from geomprobe.analysis.pca import explained_variance_ratios

    def share(rows: np.ndarray) -> float:
        return float(np.sum(explained_variance_ratios(rows.reshape(len(rows), -1))[:k]))

    return share


def focusing_of(entropy_bits: np.ndarray) -> float:
    """entropy_bits [n_prompts, n_layers, n_heads] -> 1 - Hbar(L-1) / Hbar(0) (METHODS.md section 4)."""
    hbar = np.nanmean(entropy_bits.mean(axis=2), axis=0)
    if not hbar[0] > 0:
        raise AnalysisError("attention entropy at layer 0 is 0: focusing is undefined")
    return float(1.0 - hbar[-1] / hbar[0])


def share_gain(k: int) -> Callable[[np.ndarray], float]:
    """rows [n, p + 1] whose last column is 0 (reference set) or 1 (compared set) -> the share of
    the first k principal components in set 1 minus that in set 0 (each set's own PCA)."""
    share = explained_share(k)

    def gain(rows: np.ndarray) -> float:
        group = rows[:, -1]
        return share(rows[group == 1, :-1]) - share(rows[group == 0, :-1])

    return gain


def mean_of(rows: np.ndarray) -> float:
    return float(np.mean(rows))
