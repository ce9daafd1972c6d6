"""The SULA suite's compare rows (geomprobe.compare): the main condition's statistics and MAE
baselines, the entropy axis's PC1 share, and each control condition's few statistics
(`mae_bits[shuffled]`)."""

from __future__ import annotations

from geomprobe.compare import Headline, Rows, register_compare

SULA_MAIN = ("mae_bits", "pearson_H_model_H_bayes", "spearman_H_model_H_bayes", "rho_pc1_H_bayes_given_k",
             "rho_pc1_H_bayes_within_k", "rho_pc1_H_bayes", "rho_k_pc1", "rho_pc1_H_model", "rho_pc1_p_model_l1",
             "rho_pc1_H_bayes_given_n_tokens", "rho_pc1_H_bayes_given_k_n_tokens", "rho_n_tokens_pc1", "H_bayes",
             "H_model", "kl_bits", "label_mass")
SULA_CONTROL = ("mae_bits", "pearson_H_model_H_bayes", "rho_pc1_H_model", "rho_pc1_H_bayes_given_k")
SULA_BASELINES = ("model", "constant", "k_only", "k_only_median", "zero", "model_minus_k_only")


def read(r: dict, rows: Rows) -> dict:
    conditions = r.get("conditions") or {}
    main = conditions.get("main") or {}
    for key in SULA_MAIN:
        rows.estimate(key, main.get(key))
    for key in SULA_BASELINES:
        rows.estimate(f"mae_baseline_{key}", (main.get("mae_baselines") or {}).get(key))
    given_k = main.get("rho_pc1_H_bayes_given_k")
    if isinstance(given_k, dict) and isinstance(given_k.get("value"), (int, float)):
        # what the untrained copies are compared on: each model's PC1 is oriented on its own, so the size
        rows.add("abs_rho_pc1_H_bayes_given_k", abs(given_k["value"]), None,
                 "|Spearman partial rho(PC1, H_bayes) given k| (the untrained comparison's statistic)", given_k.get("n"))
    axis = r.get("axis") or {}
    rows.add("axis_pc1_explained", axis.get("pc1_explained"), None,
             f"PC1 share of the main prompts' layer {axis.get('layer')} {axis.get('readout', '')} (the entropy axis)",
             main.get("n_prompts"))
    for name, entry in conditions.items():
        if name == "main" or not isinstance(entry, dict):
            continue
        for key in SULA_CONTROL:
            rows.estimate(f"{key}[{name}]", entry.get(key))
        rows.estimate(f"mae_baseline_k_only[{name}]", (entry.get("mae_baselines") or {}).get("k_only"))
    return {"mae_bits": "mae_bits", "abs_rho_pc1_H_bayes_given_k": "abs_rho_pc1_H_bayes_given_k"}


register_compare("sula", read, headlines=(
    Headline("mae_bits", "SULA MAE", "lower", "bits"),  # the model's entropy tracks the exact posterior's
    # PC1 tracks the posterior entropy beyond the evidence count k; its sign is the axis's orientation
    Headline("rho_pc1_H_bayes_given_k", "rho|k", "none", "correlation"),
    Headline("abs_rho_pc1_H_bayes_given_k", "|rho|k|", "higher", "correlation", summary=False),
    Headline("pearson_H_model_H_bayes", "r(H_model, H_bayes)", "higher", "correlation", summary=False),
    Headline("mae_baseline_model_minus_k_only", "MAE - k-only MAE", "lower", "bits", summary=False),
))
