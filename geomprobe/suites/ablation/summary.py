"""The ablation suite's results from its cached passes (package docstring, items 5 and 6):
results.json's "baseline" and "conditions", each condition's true and random axes, its primary
and secondary tests and its reading. Numbers only: no model, no pass is run here."""

from __future__ import annotations

import numpy as np

from geomprobe.analysis.ablation_metrics import (
    AT_EDITED_LAYER,
    AXIS_STATISTIC,
    READING_THRESHOLDS,
    behaviour_change,
    behaviour_point,
    compare_with_random,
    holm,
    paired_true_vs_random,
    primary_statistic,
    reading,
)
from geomprobe.analysis.sula_metrics import correlation, mean_ci, restrict_to_labels

from .nulls import untrained_for

# Measured with analyses/ablation_ranks.py (48 untrained tiny Llamas, 19 matched random axes each):
# the ranks of cut and shift spread as uniform ranks do (KS p 0.37-0.84), those of `only` do not
# (rank 1 or 20 in 19 of 48 at the single layer, KS p 0.001; METHODS.md 8.3). Keeping the values' largest-variance
# direction alone has no matched counterpart (a control scaled to keep as much gave the opposite
# bias: rank 18 of 20 on average), so its within-model rank carries no p-value.
ONLY_UNCALIBRATED = ("no p-value: keeping the values' largest-variance direction alone has no matched random "
                     "counterpart (on untrained models this rank is 1 or 20 far more often than a uniform rank); "
                     "the untrained copies' comparison of log2 true/random is the test")


def summarise(passes: dict, operations, sets, H_bayes, n_boot: int, seed: int, last: int, n_random: int,
              positions: str, untrained: dict | None = None, controls: str = "matched",
              refusals: dict | None = None) -> dict:
    """results.json's "baseline" and "conditions" from the cached passes. The axis-entropy
    correlation is read at every layer after a set's last edited one, up to `last`, that the
    passes measured (each on its own axis), and reported per layer. Each condition's primary
    statistic (PRIMARY) is compared with the untrained copies' (null_ablations' result, or None),
    its secondary rank tests Holm-adjusted, and its "behaviour changed" thresholds calibrated on
    the copies (the fixed ones without copies). controls: what the random axes are, in words
    ("matched", or the released code's "unmatched, as released"); refusals: {condition id: why its
    controls were refused} (refused_for: no random-axis passes ran for it)."""
    measured = sorted(int(layer) for layer in passes["baseline"]["axis_entropy"])
    base = _side(passes, "baseline")
    baseline = {
        "mae_bits": mean_ci(np.abs(base["H_model"] - H_bayes), n_boot, seed),
        "pearson_H_model_H_bayes": correlation(base["H_model"], H_bayes, "pearson", n_boot, seed),
        "H_model": mean_ci(base["H_model"], n_boot, seed),
        "label_mass": mean_ci(base["label_mass"], n_boot, seed),
        "axis_entropy": passes["baseline"]["axis_entropy"],
    }
    conditions = []
    for name, op, params in operations:
        for set_name, layers in sets:
            downstream = [layer for layer in measured if max(layers) < layer <= last]
            refused = (refusals or {}).get(f"{name}/{set_name}") or []
            conditions.append(_condition(passes, name, op, params, set_name, layers, downstream, base, H_bayes,
                                         n_boot, seed, 0 if refused else n_random, positions, untrained,
                                         controls if not refused else "refused: " + "; ".join(refused)))
    across = holm({c["id"]: c["primary"]["statistic"]["p_value"] for c in conditions})
    for c in conditions:
        c["primary"]["p_holm_across_conditions"] = across[c["id"]]
    return {"baseline": baseline, "conditions": conditions}


def _side(passes: dict, name: str) -> dict:
    """One pass's label-restricted output (H_model, label_mass, ...)."""
    return restrict_to_labels(np.array(passes[name]["token_probs"]))


def _r_at(passes: dict, name: str, layer: int):
    """One pass's axis-entropy correlation at a layer (None where not measured)."""
    entry = passes[name]["axis_entropy"].get(str(layer))
    return None if entry is None else entry.get(AXIS_STATISTIC)


def _change(after, before):
    """after - before, None when either is."""
    return None if after is None or before is None else after - before


def _mean_abs(changes):
    """The mean |change| over the defined ones, None when none is."""
    changes = [abs(c) for c in changes if c is not None]
    return float(np.mean(changes)) if changes else None


def _condition(passes: dict, name: str, op: str, params: dict, set_name: str, layers: list[int],
               downstream: list[int], base: dict, H_bayes, n_boot: int, seed: int, n_random: int, positions: str,
               untrained: dict | None, controls: str) -> dict:
    """One condition of results.json: the true axis's edit, the random axes', the tests and the reading."""
    true_name = f"{name}_{set_name}_true"
    random_names = [f"{name}_{set_name}_random{draw:02d}" for draw in range(n_random)]
    edited = _side(passes, true_name)
    true, per_layer = _true_axis(passes, true_name, op, layers, downstream, base, edited, H_bayes, n_boot, seed)
    random, err_random, moved_random = _random_axes(passes, random_names, downstream, base, H_bayes)
    behaviour = true["behaviour"]
    versus = _versus_random(true, per_layer, random, err_random, moved_random, base, edited, H_bayes, n_boot, seed)
    family, adjusted = _secondary_tests(versus, per_layer)
    condition_id = f"{name}/{set_name}"
    statistic = primary_statistic(behaviour["mean_abs_dH_bits"]["value"],
                                  [d["behaviour"]["mean_abs_dH_bits"] for d in random])
    if op == "only" and random:
        statistic = {**statistic, "p_value": None, "uncalibrated": ONLY_UNCALIBRATED}
    against_untrained, thresholds = untrained_for(condition_id, untrained, statistic["log2_ratio"])
    primary = {"statistic": statistic, "untrained": against_untrained, "controls": controls}
    against = None if not random else {
        "mean_abs_dH_bits": (versus["mean_abs_dH_bits"], versus["paired_abs_dH_bits"]),
        "delta_mae_bits": (versus["delta_mae_bits"], versus["paired_error_bits"])}
    downstream_rows = [(layer, per_layer[str(layer)]["before"], per_layer[str(layer)]["after"],
                        versus["axis_r_downstream_change"][str(layer)] if random else None)
                       for layer in downstream]
    limits = {**READING_THRESHOLDS, **thresholds}
    return {
        "id": condition_id, "op": op, **params, "layer_set": set_name, "layers": layers,
        "downstream_layers": downstream, "positions": positions, "true": true, "random": random,
        "vs_random": versus, "primary": primary,
        "secondary": {"tests": list(family), "correction": "holm", "p_holm": adjusted},
        "behaviour_thresholds": thresholds,
        "reading": reading(downstream_rows, behaviour, against, limits, primary if random else None),
    }


def _true_axis(passes: dict, true_name: str, op: str, layers: list[int], downstream: list[int], base: dict,
               edited: dict, H_bayes, n_boot: int, seed: int) -> tuple[dict, dict]:
    """(the condition's "true": the true axis's behaviour change and axis-entropy correlation, its
    downstream entries per layer)."""
    true_geometry = passes[true_name]["axis_entropy"]
    per_layer = {}
    for layer in downstream:
        before, after = _r_at(passes, "baseline", layer), _r_at(passes, true_name, layer)
        per_layer[str(layer)] = {"before": before, "after": after, "change": _change(after, before),
                                 "sd_ratio": true_geometry[str(layer)]["sd_ratio"]}
    at_edited = {str(layer): {"before": _r_at(passes, "baseline", layer), "after": _r_at(passes, true_name, layer),
                              "sd_ratio": true_geometry[str(layer)]["sd_ratio"], "note": AT_EDITED_LAYER[op]}
                 for layer in layers if str(layer) in true_geometry}
    true = {
        "behaviour": behaviour_change(H_bayes, base["H_model"], edited["H_model"], base["label_mass"],
                                      edited["label_mass"], n_boot, seed),
        "axis_entropy": {
            "statistic": AXIS_STATISTIC,
            "downstream": per_layer,
            "first_downstream_layer": downstream[0] if downstream else None,
            "mean_abs_change_downstream": _mean_abs(e["change"] for e in per_layer.values()),
            "at_edited_layers": at_edited,
        },
    }
    return true, per_layer


def _random_axes(passes: dict, random_names: list[str], downstream: list[int], base: dict,
                 H_bayes) -> tuple[list[dict], list, list]:
    """(the condition's "random" entries, each draw's |error| and |dH| per prompt) for its random axes."""
    random, err_random, moved_random = [], [], []
    for draw, random_name in enumerate(random_names):
        H = _side(passes, random_name)["H_model"]
        r_random = {str(layer): _r_at(passes, random_name, layer) for layer in downstream}
        random.append({"draw": draw, "behaviour": behaviour_point(H_bayes, base["H_model"], H),
                       "downstream_r": r_random,
                       "mean_abs_change_downstream": _mean_abs(
                           _change(r_random[str(layer)], _r_at(passes, "baseline", layer)) for layer in downstream)})
        err_random.append(np.abs(H - H_bayes))
        moved_random.append(np.abs(H - base["H_model"]))
    return random, err_random, moved_random


def _versus_random(true: dict, per_layer: dict, random: list[dict], err_random: list, moved_random: list, base: dict,
                   edited: dict, H_bayes, n_boot: int, seed: int) -> dict:
    """The condition's "vs_random": where the true axis's changes fall among the random axes'."""
    behaviour = true["behaviour"]
    return {
        "delta_mae_bits": compare_with_random(behaviour["delta_mae_bits"]["value"],
                                              [d["behaviour"]["delta_mae_bits"] for d in random], "greater"),
        "mean_abs_dH_bits": compare_with_random(
            behaviour["mean_abs_dH_bits"]["value"], [d["behaviour"]["mean_abs_dH_bits"] for d in random],
            "greater"),
        "delta_pearson": compare_with_random(behaviour["delta_pearson"]["value"],
                                             [d["behaviour"]["delta_pearson"] for d in random], "abs"),
        "axis_r_downstream_change": {
            key: compare_with_random(entry["change"],
                                     [_change(d["downstream_r"][key], entry["before"]) for d in random], "abs")
            for key, entry in per_layer.items()},
        "axis_r_mean_abs_change_downstream": compare_with_random(
            true["axis_entropy"]["mean_abs_change_downstream"],
            [d["mean_abs_change_downstream"] for d in random], "greater"),
        "paired_error_bits": paired_true_vs_random(np.abs(edited["H_model"] - H_bayes), err_random,
                                                   n_boot, seed),
        "paired_abs_dH_bits": paired_true_vs_random(np.abs(edited["H_model"] - base["H_model"]),
                                                    moved_random, n_boot, seed),
    }


def _secondary_tests(versus: dict, per_layer: dict) -> tuple[dict, dict]:
    """(the secondary family {test: where}, its Holm-adjusted p's), each test's p_holm set in place."""
    family = {"delta_mae_bits": versus["delta_mae_bits"], "delta_pearson": versus["delta_pearson"],
              **{f"axis_r_downstream_change[{key}]": where
                 for key, where in versus["axis_r_downstream_change"].items()}}
    if len(per_layer) > 1:
        family["axis_r_mean_abs_change_downstream"] = versus["axis_r_mean_abs_change_downstream"]
    adjusted = holm({key: where["p_value"] for key, where in family.items()})
    for key, where in family.items():
        where["p_holm"] = adjusted[key]
    return family, adjusted
