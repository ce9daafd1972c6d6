"""The ablation suite's compare rows (geomprobe.compare): the unablated baseline, the headline
condition (geomprobe.compare.ablation_headline), and per condition (`delta_mae_bits[cut/multi]`) the
behaviour under the true axis's edit, where it ranks among the random axes, and the entropy axis's
correlation at the first layer after the edit."""

from __future__ import annotations

from geomprobe.compare import Headline, Rows, ablation_headline, number, register_compare


def _versus_text(where: dict) -> str:
    if not isinstance(where, dict) or where.get("rank") is None:
        return ""
    return (f"{where.get('n_random')} random axes: mean {_g(where.get('random_mean'))}, rank {where.get('rank')}/"
            f"{where.get('of')} ({where.get('alternative')})")


def _g(value) -> str:
    return "n/a" if number(value) is None else f"{value:.4g}"


def read(r: dict, rows: Rows) -> dict:
    baseline = r.get("baseline") or {}
    rows.estimate("baseline_mae_bits", baseline.get("mae_bits"))
    rows.estimate("baseline_pearson_H_model_H_bayes", baseline.get("pearson_H_model_H_bayes"))
    headline = ablation_headline(r)
    if headline is not None:
        rows.add("headline_condition", None, None, "the true cut on the largest layer set (paper III's multi-layer "
                 "cut), else the first condition", text=str(headline.get("id")))
    for condition in r.get("conditions") or []:
        if not isinstance(condition, dict):
            continue
        cid = condition.get("id")
        behaviour = (condition.get("true") or {}).get("behaviour") or {}
        versus = condition.get("vs_random") or {}
        for key in ("mae_bits", "delta_mae_bits", "delta_pearson", "mean_abs_dH_bits"):
            where = versus.get(key) if key != "mae_bits" else None
            rows.estimate(f"{key}[{cid}]", behaviour.get(key), text=_versus_text(where))
            if where and rows.rows and rows.rows[-1]["statistic"] == f"{key}[{cid}]":
                rows.rows[-1]["p_value"] = number(where.get("p_value"))
        geometry = (condition.get("true") or {}).get("axis_entropy") or {}
        first = geometry.get("first_downstream_layer")
        entry = (geometry.get("downstream") or {}).get(str(first)) or {}
        where = (versus.get("axis_r_downstream_change") or {}).get(str(first)) or {}
        at = f"Spearman rho(v'.u, H_model) at layer {first}, the first after the edit, on its own axis"
        rows.add(f"axis_r_before[{cid}]", entry.get("before"), None, f"{at}, unperturbed")
        rows.add(f"axis_r_after[{cid}]", entry.get("after"), None, f"{at}, under the true axis's edit")
        rows.add(f"axis_r_change[{cid}]", entry.get("change"), None, f"after - before, {at}",
                 text=_versus_text(where), p_value=where.get("p_value"))
    return {}


register_compare("ablation", read, headlines=(
    # cutting the entropy axis hurts the entropy match more than a random axis does; [*]: the
    # headline condition's (its id in the headline_condition row's text)
    Headline("delta_mae_bits[*]", "cut dMAE", "higher", "bits"),
    Headline("baseline_mae_bits", "unablated MAE", "lower", "bits", summary=False),
))
