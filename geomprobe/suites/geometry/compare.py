"""The geometry suite's compare rows (geomprobe.compare): the value manifold's PC1, PC1+PC2 and
participation ratio with their shuffle nulls, rho(PC1, next-token entropy), key orthogonality with
its baselines, attention focusing (raw and normalised) and the verdict."""

from __future__ import annotations

import math

from geomprobe.compare import EARLY_FRACTION, Headline, Rows, ci_text, number, register_compare


def read(r: dict, rows: Rows) -> dict:
    vm = r.get("value_manifold") or {}
    n, methods = vm.get("n_prompts"), vm.get("ci_method") or {}
    where = f"layer {vm.get('layer')} {vm.get('readout', 'values')}"
    for key, what in (("pc1", "PC1 share of variance"), ("pc12", "PC1+PC2 share of variance"),
                      ("pr", "participation ratio")):
        rows.add(key, vm.get(key), vm.get(f"{key}_ci95"), f"{what}, {where}; " + ci_text(methods, key), n)
    for key in ("pc1", "pc12"):
        null = (vm.get("shuffle_null") or {}).get(key) or {}
        rows.add(f"{key}_shuffle_null", null.get("median"), [null.get("low"), null.get("high")],
                 f"median of {(vm.get('shuffle_null') or {}).get('n_draws')} shuffles of the same matrix "
                 "(columns permuted independently); the interval is their 2.5-97.5th percentiles", n)
    rows.add("rho_pc1_entropy", vm.get("rho_pc1_entropy_raw", vm.get("rho_pc1_entropy")), None,
             "Spearman rho(PC1, next-token entropy) over prompts, as computed", n,
             p_value=vm.get("rho_pc1_entropy_pvalue"))
    rows.estimate("rho_pc1_entropy_given_length", vm.get("rho_pc1_entropy_given_length"))
    keys = r.get("key_orthogonality") or {}
    layer_mean = [v for v in keys.get("layer_mean") or [] if number(v) is not None]
    if layer_mean:
        mean = keys.get("mean") if number(keys.get("mean")) is not None else sum(layer_mean) / len(layer_mean)
        rows.add("keys_mean_abs_cos", mean, None, "mean off-diagonal |cos| between W_K columns over heads and layers "
                 "(lower: more orthogonal)", len(layer_mean))
        n_early = max(1, math.ceil(len(layer_mean) * EARLY_FRACTION))
        rows.add("keys_early_mean_abs_cos", sum(layer_mean[:n_early]) / n_early, None,
                 "mean over the first third of the layers of the per-layer mean |cos| (paper III Table 2)", n_early)
    rows.add("keys_fraction_below", keys.get("fraction_below"), None,
             f"fraction of layers with mean |cos| < {keys.get('threshold')}", len(layer_mean) or None)
    rows.add("keys_analytic_gaussian", keys.get("analytic_gaussian"), None,
             "baseline: analytic E|cos| of random directions in R^D")
    for name in ("init", "step0"):
        baseline = (keys.get("baselines") or {}).get(name) or {}
        rows.add(f"keys_{name}_mean_abs_cos", baseline.get("mean"), None, f"baseline: {name} W_K, mean |cos|")
    focus = r.get("attention_focusing") or {}
    focus_methods = focus.get("ci_method") or {}
    rows.add("focusing", focus.get("focusing"), focus.get("focusing_ci95"),
             "1 - H(L-1)/H(0) of the head-mean final-token attention entropy; "
             + ci_text(focus_methods, "focusing").replace("CI", "bootstrap CI"), focus.get("n_prompts"))
    normalised = focus.get("normalised") or {}
    rows.add("focusing_normalised", normalised.get("focusing"), normalised.get("focusing_ci95"),
             "the same on entropy / log2(visible keys); "
             + ci_text(normalised.get("ci_method") or {}, "focusing").replace("CI", "bootstrap CI"),
             focus.get("n_prompts"))
    verdict = r.get("verdict") or {}
    if verdict:
        rows.add("verdict", verdict.get("n_met"), None, verdict.get("summary"), verdict.get("n_criteria"),
                 text=str(verdict.get("label") or ""))
    return {"pc1": "pc1", "pc12": "pc12", "keys": "keys_mean_abs_cos", "focusing": "focusing"}


register_compare("geometry", read, headlines=(
    Headline("pc12", "PC1+PC2", "higher", "fraction"),  # a low-dimensional value manifold
    Headline("keys_mean_abs_cos", "keys |cos|", "lower", "mean |cos|"),  # near-orthogonal keys
    Headline("focusing", "focusing", "higher", "fraction"),  # attention entropy falls with depth
    Headline("verdict", "verdict", "higher", "verdict"),  # criteria met (of n); its text the label
    Headline("pc1", "PC1", "higher", "fraction", summary=False),
    Headline("keys_fraction_below", "keys below", "higher", "fraction", summary=False),
))
