"""Statistics of entropy-axis interventions (METHODS.md section 8.5). numpy/scipy only.

    change = behaviour_change(H_bayes, H_base, H_edit, mass_base, mass_edit)   # vs the unperturbed pass
    change["delta_mae_bits"], change["delta_pearson"], change["mean_abs_dH_bits"]   # each with a 95% CI
    geometry = axis_entropy_correlation(coords, H_edit, sigma_u)                 # rho(v'.u, H_model)
    where = compare_with_random(true_value, random_values, alternative="greater")  # rank, empirical p
    paired = paired_true_vs_random(err_true, err_random)                           # [n], [m, n] per prompt
    adjusted = holm({"delta_mae_bits": 0.05, "delta_pearson": 0.40})               # secondary tests
    primary = primary_statistic(true_dH, random_dH)       # the one pre-declared test of a condition
    limits = calibrated_thresholds(null_changes)          # "behaviour changed", from untrained copies
    text = reading(downstream, change, versus, limits, primary)                    # one line

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

One statistic per condition is pre-declared as primary (PRIMARY, METHODS.md section 8.5): the
true axis's mean |H_edit - H_base| (bits) against the matched random axes, tested by its rank
among them and, against untrained copies, by log2(true / mean random) (`primary_statistic`). The
other rank tests of a condition (dMAE, dPearson, the downstream axis-entropy correlation per
layer and its mean |change|) are secondary, their empirical p Holm-adjusted together (`holm`).
"""

from __future__ import annotations

import math

import numpy as np

from geomprobe.analysis.bootstrap import resample_chunks
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

# The primary statistic of every condition (stored in results.json with the conditions).
PRIMARY = {
    "measure": "mean_abs_dH_bits",
    "description": "mean over prompts of |H_edit - H_base| (bits), the true axis's edit against the matched random "
                   "axes' edits: how far the edit moves the output's entropy over the two labels",
    "within_model": "rank of the true axis's value among the 1 + n_random values (ties count against it), empirical "
                    "one-sided p = rank / (1 + n_random)",
    "against_untrained": "log2(true / mean of the random axes), compared with the same number of each untrained copy "
                         "on its own entropy axis and its own matched random axes "
                         "(geomprobe.analysis.null_comparison.judge_against_nulls, higher is more specific)",
    "why": "defined for every operation, sign-free, read at the output, and the quantity the matched controls make "
           "exchangeable on untrained networks (tests/test_ablation_controls.py)",
}
SECONDARY = ("delta_mae_bits", "delta_pearson", "axis_r_downstream_change", "axis_r_mean_abs_change_downstream")
SECONDARY_NOTE = ("secondary rank tests of a condition (dMAE, |dPearson|, |change| of the downstream axis-entropy "
                  "correlation per layer, and its mean |change| over the downstream layers when there are two or "
                  "more), their empirical p Holm-adjusted together (p_holm); with n_random = 19 the smallest "
                  "adjusted p of m tests is m / 20")

# The thresholds behind each condition's one-line reading (stored in results.json with them). The
# behaviour thresholds (mae_bits, pearson) are a fallback: with untrained copies each condition is
# read against calibrated_thresholds (untrained networks reach |dPearson| 0.3-0.4 under a cut).
READING_THRESHOLDS = {
    "axis_r_zero": 0.10,  # |rho(v'.u, H_model)| below this, downstream: no axis-entropy correlation left
    "axis_r_change": 0.10,  # a change of the downstream axis-entropy correlation at least this large is a change
    "mae_bits": 0.01,  # fallback (no untrained copies): |change of the SULA MAE| below this, in bits: unchanged
    "pearson": 0.01,  # fallback (no untrained copies): |change of Pearson(H_model, H_bayes)| below this: unchanged
    "coordinate_removed_sd_ratio": 1e-3,  # std(v'.u) / sigma_u below this: coordinate constant, r reported as 0
    "vs_random": "more (less) than random axes: the true-axis value lies above (below) every random axis's, "
                 "and the paired-bootstrap 95% CI of true minus mean random excludes 0",
    "behaviour_source": "fixed (no untrained copies: --null off); with copies each condition has its own "
                        "calibrated thresholds",
}
CALIBRATION_QUANTILE = 95  # percent: "behaviour changed" beyond this percentile of the untrained copies' |change|


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
    boot = np.concatenate([_rowwise_pearson(H_edit[idx], H_bayes[idx]) - _rowwise_pearson(H_base[idx], H_bayes[idx])
                           for idx in resample_chunks(np.random.default_rng(seed), len(H_bayes), n_boot, 3)]
                          or [np.zeros(0)])
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


def holm(p_values: dict) -> dict:
    """Holm's step-down adjustment of a family of p-values {name: p or None} -> {name: adjusted p
    or None}: the i-th smallest of m is multiplied by m - i + 1, then made monotone and capped at
    1. None (an untestable member) is left out of the family and stays None."""
    named = sorted(((p, name) for name, p in p_values.items() if p is not None), key=lambda item: item[0])
    m, out, running = len(named), {name: None for name in p_values}, 0.0
    for i, (p, name) in enumerate(named):
        running = max(running, min(1.0, (m - i) * float(p)))
        out[name] = running
    return out


def primary_statistic(true_value, random_values) -> dict:
    """The primary statistic of a condition (PRIMARY): true_value, the true axis's mean |dH| (bits),
    random_values, the matched random axes' (one each). compare_with_random's rank and empirical p,
    plus log2_ratio = log2(true / mean random), the number compared with untrained copies (None when
    either is 0 or undefined)."""
    where = compare_with_random(true_value, random_values, "greater")
    mean = where["random_mean"]
    ratio = None
    if true_value is not None and mean is not None and true_value > 0 and mean > 0:
        ratio = float(math.log2(true_value / mean))
    return {"measure": PRIMARY["measure"], **where, "log2_ratio": ratio}


def calibrated_thresholds(null_changes: dict, quantile: float = CALIBRATION_QUANTILE) -> dict:
    """"Behaviour changed" thresholds from untrained copies: null_changes {"mae_bits": [dMAE of every
    edit of this condition on every copy, true and random axes], "pearson": [dPearson, likewise]}
    -> {"mae_bits", "pearson"}: the `quantile` percentile of their absolute values (None when no
    copy measured it), with n and the source in words."""
    out = {}
    for key in ("mae_bits", "pearson"):
        values = np.abs(np.array([v for v in null_changes.get(key, []) if v is not None], dtype=np.float64))
        values = values[np.isfinite(values)]
        out[key] = float(np.percentile(values, quantile)) if len(values) else None
        out[f"n_{key}"] = int(len(values))
    out["source"] = (f"untrained copies: the {quantile:g}th percentile of |change| over their edits of this condition "
                     f"(true and matched random axes, each copy on its own axis)")
    return out


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
            thresholds: dict = READING_THRESHOLDS, primary: dict | None = None) -> str:
    """One line that follows from the numbers: the downstream layers, the output, the secondary
    comparisons with the random axes, then the primary statistic.

    downstream: [(layer, r before, r after, compare_with_random of the change or None)] for the
    layers after the last edited one, in order (the edited layers are never evidence: they are not
    read here); the first and the last are named, and with more than two the mean |change| over
    all of them. change: behaviour_change(...) of the true axis (the output: H_model vs H_bayes);
    versus: {"mean_abs_dH_bits": (compare, paired), "delta_mae_bits": (compare, paired)} against
    the random axes, or None. thresholds: READING_THRESHOLDS, with "mae_bits" and "pearson" replaced
    by a condition's calibrated_thresholds where untrained copies gave them (their "source" is
    then named). primary: {"statistic": primary_statistic(...), "untrained": judge_against_nulls
    (...) or a "not tested" entry, or None (no copies), "controls": what the random axes are
    ("matched" unless said)}."""
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
    mae_limit = thresholds.get("mae_bits")
    pearson_limit = thresholds.get("pearson")
    calibrated = "source" in thresholds and mae_limit is not None
    if mae_limit is None:
        mae_limit = READING_THRESHOLDS["mae_bits"]
    if pearson_limit is None:
        pearson_limit = READING_THRESHOLDS["pearson"]
    quiet = abs(d_mae) < mae_limit and (d_r is None or abs(d_r) < pearson_limit)
    numbers = f"MAE {d_mae:+.3f} bits" + ("" if d_r is None else f", Pearson {d_r:+.3f}")
    if calibrated:
        numbers += f"; changed at {mae_limit:.3f} bits, {pearson_limit:.3f}: untrained copies' 95th percentile"
    line = " / ".join([geometry, f"output: behaviour {'unchanged' if quiet else 'changed'} ({numbers})"])
    if versus:
        moved = _versus(*versus["mean_abs_dH_bits"])
        hurt = _versus(*versus["delta_mae_bits"])
        if moved is not None:
            compare_moved, compare_mae = versus["mean_abs_dH_bits"][0], versus["delta_mae_bits"][0]
            moved_words = {"more": "more", "less": "less", "within": "no differently"}
            mae_words = {"more": "higher", "less": "lower", "within": "no different"}
            holm_p = compare_mae.get("p_holm")
            mae_text = (f"MAE {mae_words[hurt]} (rank {compare_mae['rank']}/{compare_mae['of']}"
                        + ("" if holm_p is None else f", Holm p {holm_p:.2f}") + ")")
            if primary:  # the primary names the movement itself
                line += f"; vs {compare_mae['n_random']} random axes: {mae_text}"
            else:
                line += (f"; vs {compare_moved['n_random']} random axes: behaviour moved {moved_words[moved]} "
                         f"(rank {compare_moved['rank']}/{compare_moved['of']}), {mae_text}")
    if primary:
        line += " / " + primary_words(primary)
    return line


def primary_words(primary: dict) -> str:
    """'primary, mean |dH| vs 19 matched random axes: rank 3/20 (p 0.15); untrained copies (7):
    log2 true/random +0.41 vs +0.12 +- 0.30, indistinguishable from untrained (t, p 0.22, mde 1.99 sd)'."""
    stat, controls = primary["statistic"], primary.get("controls", "matched")
    if stat.get("rank") is None:
        words = f"primary, mean |dH| vs {controls} random axes: not measured"
    else:
        words = (f"primary, mean |dH| vs {stat['n_random']} {controls} random axes: rank {stat['rank']}/{stat['of']} "
                 + ("(no p: not a calibrated control for this operation)" if stat.get("p_value") is None
                    else f"(p {stat['p_value']:.2f})"))
    untrained = primary.get("untrained")
    if untrained is None:
        return words + "; no untrained copies (--null off)"
    if untrained.get("status") == "not tested" or "n_nulls" not in untrained:
        return words + f"; untrained copies: not tested ({untrained.get('note')})"
    sd = untrained.get("null_sd")
    spread = "" if sd is None else f" +- {sd:.2f}"
    mde = (untrained.get("mde") or {}).get("sd")
    return (words + f"; untrained copies ({untrained['n_nulls']}): log2 true/random {untrained['model']:+.2f} vs "
            f"{untrained['null_mean']:+.2f}{spread}, {untrained['status']} ({untrained['rule']}, p "
            f"{untrained['p_value']:.2f}" + ("" if mde is None else f", mde {mde:.2f} sd") + ")")
