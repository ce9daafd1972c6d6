"""Statistics of entropy-axis interventions (METHODS.md section 8.5). numpy/scipy only.

    change = behaviour_change(H_bayes, H_base, H_edit, mass_base, mass_edit)   # vs the unperturbed pass
    change["delta_mae_bits"], change["delta_pearson"], change["mean_abs_dH_bits"]   # each with a 95% CI
    geometry = axis_entropy_correlation(coords, H_edit, sigma_u)                 # rho(v'.u, H_model)
    where = compare_with_random(true_value, random_values, alternative="greater")  # rank, empirical p
    paired = paired_true_vs_random(err_true, err_random)                           # [n], [m, n] per prompt
    text = reading(downstream, change, versus)                                     # one line

Entropies in bits. "Behaviour" (the output) is the model's entropy over the two SULA labels,
H_model, against the exact H_bayes: the SULA MAE and Pearson(H_model, H_bayes). "Geometry" is the
axis-entropy correlation: the Spearman rho of the values' coordinate on a layer's entropy axis
with H_model (AXIS_STATISTIC). Spearman because the axis is oriented by Spearman
(geomprobe.analysis.sula_metrics.fit_axis: rho(z . u, H_model) >= 0), so the unperturbed r is
>= 0 at every layer and the sign of r means what the orientation says (METHODS.md section 8.5:
orientation and r use the same statistic).

Evidence is measured downstream of the edit only: at an edited layer a cut makes the coordinate
constant (r = 0 by construction), `only` keeps it and a shift moves it by a constant, so the
edited layer's r says nothing about the model's use of the axis.
"""

from __future__ import annotations

import math

import numpy as np

from geomprobe.analysis.estimate import Estimate, estimate
from geomprobe.analysis.sula_metrics import _constant, _rowwise_pearson, correlation, mean_ci, spearman_or_none
from geomprobe.errors import AnalysisError

AXIS_STATISTIC = "spearman"  # the axis-entropy correlation, as the axis's orientation (sula_metrics.fit_axis)

# What the axis-entropy correlation at an edited layer is by construction (never evidence).
AT_EDITED_LAYER = {
    "cut": "at the edited layer: zero by construction for cut (the coordinate is made constant); not evidence",
    "only": "at the edited layer: the coordinate is kept as it was, only H_model moves; not evidence",
    "shift": "at the edited layer: the coordinate moves by a constant, so its ranks do not; not evidence",
}

# The thresholds behind each condition's one-line reading (stored in results.json with them).
READING_THRESHOLDS = {
    "axis_r_zero": 0.10,  # |rho(v'.u, H_model)| below this, downstream: no axis-entropy correlation left
    "axis_r_change": 0.10,  # a change of the downstream axis-entropy correlation at least this large is a change
    "mae_bits": 0.01,  # |change of the SULA MAE| below this, in bits: MAE unchanged
    "pearson": 0.01,  # |change of Pearson(H_model, H_bayes)| below this: correlation unchanged
    "coordinate_removed_sd_ratio": 1e-3,  # std(v'.u) / sigma_u below this: coordinate constant, r reported as 0
    "vs_random": "more (less) than random axes: the true-axis value lies above (below) every random axis's, "
                 "and the paired-bootstrap 95% CI of true minus mean random excludes 0",
}


def pearson_or_none(x, y) -> float | None:
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if len(x) < 3 or _constant(x) or _constant(y):
        return None
    value = float(np.corrcoef(x, y)[0, 1])
    return value if math.isfinite(value) else None


def axis_entropy_correlation(coords, H_model, sigma_u: float,
                             removed_ratio: float = READING_THRESHOLDS["coordinate_removed_sd_ratio"]) -> dict:
    """coords [n]: the prompts' values projected on a layer's own axis (z . u); H_model [n] bits.
    {"spearman" (rho(coords, H_model), the statistic the axis is oriented by), "sd_ratio" (std of the
    coordinate / sigma_u), "mean_coord"}. When the coordinate is constant up to rounding (sd_ratio <
    removed_ratio, e.g. at a layer that was cut), the correlation is undefined; it is reported as 0,
    its limit, with a note."""
    coords = np.asarray(coords, dtype=np.float64)
    sd_ratio = float(coords.std() / sigma_u) if sigma_u > 0 else None
    out = {AXIS_STATISTIC: spearman_or_none(coords, H_model), "sd_ratio": sd_ratio, "mean_coord": float(coords.mean())}
    if sd_ratio is not None and sd_ratio < removed_ratio:
        out[AXIS_STATISTIC] = 0.0
        out["note"] = f"axis coordinate constant up to rounding (sd {sd_ratio:.1e} sigma_u): reported as 0"
    return out


def _paired_mean(samples, n_boot: int, seed: int, what: str = "paired per-prompt difference") -> Estimate:
    """An Estimate of the mean over prompts of a per-prompt quantity of two passes over the same
    prompts (`what`), with a bootstrap CI that resamples prompts (so the pairs stay together)."""
    samples = np.asarray(samples, dtype=np.float64)
    if np.all(samples == samples[0]):  # no variation (e.g. an exact identity): the CI is the point
        value = float(samples[0])
        return estimate(value, [value, value], f"mean over prompts of the {what}; the same on every prompt, so the "
                                               f"CI is the point", len(samples))
    entry = mean_ci(samples, n_boot, seed)
    entry["method"] = (f"mean over prompts of the {what}, paired percentile bootstrap 95% CI ({n_boot} resamples "
                       f"of the prompts)")
    return entry


def pearson_change(H_bayes, H_base, H_edit, n_boot: int = 1000, seed: int = 0) -> Estimate:
    """Pearson(H_edit, H_bayes) - Pearson(H_base, H_bayes), with a paired bootstrap CI (the same
    resampled prompts for both). value None when either correlation is undefined."""
    H_bayes, H_base, H_edit = (np.asarray(a, dtype=np.float64) for a in (H_bayes, H_base, H_edit))
    method = (f"Pearson(H_edit, H_bayes) - Pearson(H_base, H_bayes), paired percentile bootstrap 95% CI ({n_boot} "
              f"resamples of the prompts, the same for both)")
    before, after = pearson_or_none(H_base, H_bayes), pearson_or_none(H_edit, H_bayes)
    if before is None or after is None:
        return estimate(None, (None, None), method, len(H_bayes), note="undefined: a correlation is undefined")
    if np.array_equal(H_base, H_edit):
        return estimate(0.0, [0.0, 0.0], "Pearson(H_edit, H_bayes) - Pearson(H_base, H_bayes); H_edit equals H_base, "
                                         "so the change and its CI are 0", len(H_bayes))
    idx = np.random.default_rng(seed).integers(0, len(H_bayes), size=(n_boot, len(H_bayes)))
    boot = _rowwise_pearson(H_edit[idx], H_bayes[idx]) - _rowwise_pearson(H_base[idx], H_bayes[idx])
    boot = boot[np.isfinite(boot)]
    ci = [float(v) for v in np.percentile(boot, [2.5, 97.5])] if len(boot) else [None, None]
    return estimate(after - before, ci, method, len(H_bayes))


def behaviour_change(H_bayes, H_base, H_edit, mass_base=None, mass_edit=None, n_boot: int = 1000,
                     seed: int = 0) -> dict:
    """An intervened pass against the unperturbed one, over the same prompts ([n] each, bits):
    the SULA MAE and Pearson(H_model, H_bayes) under the intervention (bootstrap CIs), their
    changes (paired bootstrap), mean |H_edit - H_base| and mean H_edit - H_base, and the change in
    probability mass on the two labels."""
    H_bayes, H_base, H_edit = (np.asarray(a, dtype=np.float64) for a in (H_bayes, H_base, H_edit))
    err_base, err = np.abs(H_base - H_bayes), np.abs(H_edit - H_bayes)
    out = {
        "mae_bits": mean_ci(err, n_boot, seed),
        "delta_mae_bits": _paired_mean(err - err_base, n_boot, seed,
                                       "per-prompt change of |H_model - H_bayes| (intervened minus unperturbed)"),
        "pearson_H_model_H_bayes": correlation(H_edit, H_bayes, "pearson", n_boot, seed),
        "delta_pearson": pearson_change(H_bayes, H_base, H_edit, n_boot, seed),
        "mean_abs_dH_bits": _paired_mean(np.abs(H_edit - H_base), n_boot, seed,
                                         "per-prompt |H_edit - H_base| (intervened against unperturbed)"),
        "mean_dH_bits": _paired_mean(H_edit - H_base, n_boot, seed, "per-prompt H_edit - H_base"),
    }
    if mass_base is not None and mass_edit is not None:
        out["delta_label_mass"] = _paired_mean(np.asarray(mass_edit, np.float64) - np.asarray(mass_base, np.float64),
                                               n_boot, seed, "per-prompt change of the mass on the two labels")
    return out


def behaviour_point(H_bayes, H_base, H_edit) -> dict:
    """The point values of behaviour_change (no bootstrap), for the random-axis draws."""
    H_bayes, H_base, H_edit = (np.asarray(a, dtype=np.float64) for a in (H_bayes, H_base, H_edit))
    err_base, err = np.abs(H_base - H_bayes), np.abs(H_edit - H_bayes)
    before, after = pearson_or_none(H_base, H_bayes), pearson_or_none(H_edit, H_bayes)
    return {"mae_bits": float(err.mean()), "delta_mae_bits": float((err - err_base).mean()),
            "pearson_H_model_H_bayes": after,
            "delta_pearson": None if before is None or after is None else after - before,
            "mean_abs_dH_bits": float(np.abs(H_edit - H_base).mean()), "mean_dH_bits": float((H_edit - H_base).mean())}


def compare_with_random(true_value, random_values, alternative: str = "greater") -> dict:
    """Where the true-axis value falls among the random-axis values.

    alternative "greater": is the true value larger? "abs": is its magnitude larger? rank 1 = the
    largest of the n_random + 1 values (ties count against the true axis); p_value = (1 + #{random >=
    true}) / (1 + n_random), the empirical one-sided p-value; p_min = 1 / (1 + n_random), the
    smallest p_value these random axes can give (0.05 with 19)."""
    randoms = np.array([v for v in random_values if v is not None], dtype=np.float64)
    out = {"true": true_value, "random": [float(v) for v in randoms], "n_random": int(len(randoms)),
           "alternative": alternative, "p_min": float(1 / (1 + len(randoms)))}
    if true_value is None or len(randoms) == 0:
        return {**out, "random_mean": None, "random_sd": None, "random_min": None, "random_max": None,
                "rank": None, "of": None, "p_value": None}
    stat_true = abs(true_value) if alternative == "abs" else float(true_value)
    stats = np.abs(randoms) if alternative == "abs" else randoms
    if alternative not in ("greater", "abs"):
        raise AnalysisError(f"alternative must be 'greater' or 'abs', got '{alternative}'")
    return {**out, "random_mean": float(randoms.mean()), "random_sd": float(randoms.std(ddof=1)) if len(randoms) > 1
            else 0.0, "random_min": float(randoms.min()), "random_max": float(randoms.max()),
            "rank": int(1 + (stats >= stat_true).sum()), "of": int(len(randoms) + 1),
            "p_value": float((1 + (stats >= stat_true).sum()) / (1 + len(randoms)))}


def paired_true_vs_random(true_per_prompt, random_per_prompt, n_boot: int = 1000, seed: int = 0) -> Estimate:
    """true_per_prompt [n], random_per_prompt [m, n]: a per-prompt quantity (e.g. |H_model - H_bayes|)
    under the true axis and under each random axis. The mean over prompts of true minus the mean of
    the random axes, with a paired bootstrap 95% CI over prompts."""
    true_per_prompt = np.asarray(true_per_prompt, dtype=np.float64)
    random_per_prompt = np.asarray(random_per_prompt, dtype=np.float64).reshape(-1, len(true_per_prompt))
    what = "per-prompt true-axis value minus the mean over the random axes"
    if random_per_prompt.shape[0] == 0:
        return estimate(None, (None, None), f"mean over prompts of the {what}", len(true_per_prompt),
                        note="no random axes")
    return _paired_mean(true_per_prompt - random_per_prompt.mean(axis=0), n_boot, seed, what)


def _versus(compare: dict, paired: dict | None) -> str | None:
    """'more' | 'less' | 'within' for one measure, by READING_THRESHOLDS['vs_random']."""
    if compare.get("rank") is None:
        return None
    true, low, high = compare["true"], compare["random_min"], compare["random_max"]
    ci = (paired or {}).get("ci95", [None, None])
    if true > high and (ci[0] is None or ci[0] > 0):
        return "more"
    if true < low and (ci[1] is None or ci[1] < 0):
        return "less"
    return "within"


def _layer_words(layer: int, before, after, where: dict | None, thresholds: dict) -> str:
    """'L3 weakened (+0.30 -> +0.12; |change| rank 1/20 among random axes, p 0.05)': unchanged when
    the change is under axis_r_change, destroyed when |after| falls under axis_r_zero, reversed when
    the sign flips, else weakened or strengthened in magnitude."""
    if before is None or after is None:
        return f"L{layer} undefined (constant coordinate or H_model)"
    numbers = f"{before:+.2f} -> {after:+.2f}"
    zero, moved = thresholds["axis_r_zero"], after - before
    if abs(before) < zero:
        words = "no axis-entropy correlation to act on"
    elif abs(moved) < thresholds["axis_r_change"]:
        words = "unchanged"
    elif abs(after) < zero:
        words = "destroyed"
    elif (after > 0) != (before > 0):
        words = "reversed"
    else:
        words = "weakened" if abs(after) < abs(before) else "strengthened"
    if where and where.get("rank") is not None:
        numbers += f"; |change| rank {where['rank']}/{where['of']} among random axes, p {where['p_value']:.2f}"
    return f"L{layer} {words} ({numbers})"


def reading(downstream: list[tuple], change: dict, versus: dict | None = None,
            thresholds: dict = READING_THRESHOLDS) -> str:
    """One line that follows from the numbers: the downstream layers, then the output.

    downstream: [(layer, r before, r after, compare_with_random of the change or None)] for the
    layers after the last edited one, in order (the edited layers are never evidence: they are not
    read here); the first and the last are named, and with more than two the mean |change| over
    all of them. change: behaviour_change(...) of the true axis (the output: H_model vs H_bayes);
    versus: {"mean_abs_dH_bits": (compare, paired), "delta_mae_bits": (compare, paired)} against
    the random axes, or None."""
    if not downstream:
        geometry = "downstream rho: no layer after the edit has an axis"
    else:
        shown = [downstream[0]] if len(downstream) == 1 else [downstream[0], downstream[-1]]
        geometry = "downstream rho: " + ", ".join(_layer_words(layer, before, after, where, thresholds)
                                                  for layer, before, after, where in shown)
        changes = [abs(after - before) for _, before, after, _ in downstream if before is not None and after is not None]
        if len(downstream) > 2 and changes:
            geometry += f"; mean |change| over {len(downstream)} downstream layers {np.mean(changes):.2f}"
    d_mae = change["delta_mae_bits"]["value"]
    d_r = change["delta_pearson"]["value"]
    quiet = abs(d_mae) < thresholds["mae_bits"] and (d_r is None or abs(d_r) < thresholds["pearson"])
    numbers = f"MAE {d_mae:+.3f} bits" + ("" if d_r is None else f", Pearson {d_r:+.3f}")
    line = " / ".join([geometry, f"output: behaviour {'unchanged' if quiet else 'changed'} ({numbers})"])
    if versus:
        moved = _versus(*versus["mean_abs_dH_bits"])
        hurt = _versus(*versus["delta_mae_bits"])
        if moved is not None:
            compare_moved, compare_mae = versus["mean_abs_dH_bits"][0], versus["delta_mae_bits"][0]
            moved_words = {"more": "more", "less": "less", "within": "no differently"}
            mae_words = {"more": "higher", "less": "lower", "within": "no different"}
            line += (f"; vs {compare_moved['n_random']} random axes: behaviour moved {moved_words[moved]} "
                     f"(rank {compare_moved['rank']}/{compare_moved['of']}), MAE {mae_words[hurt]} "
                     f"(rank {compare_mae['rank']}/{compare_mae['of']})")
    return line
