"""The ablation suite's report card: the headline intervention, the true entropy-axis cut against
random axes, in one paragraph beside paper III's values (METHODS.md section 8). Imported by
geomprobe.report through geomprobe.suites.base.load_faces; registers with
geomprobe.report.cards.register_card."""

from __future__ import annotations

from geomprobe.compare import ablation_headline
from geomprobe.report.cards import register_card
from geomprobe.report.figures import estimate, fmt
from geomprobe.report.page import esc
from geomprobe.report.rundata import RunData
from geomprobe.suites.ablation.figures import REF_ABLATION


def ablation_summary(ablation: dict) -> dict | None:
    """The headline condition: the true cut on the largest layer set (paper III's multi-layer
    cut), else the first condition (geomprobe.compare.ablation_headline, which the tables use too)."""
    return ablation_headline(ablation)


def _ablation_summary(run: RunData) -> str:
    """The interventions' headline of a card: the true cut on the largest layer set against the
    random axes, read at the first layer after the edit and at the output, and its one-line
    reading (ablation/results.json)."""
    ablation = run.results.get("ablation")
    headline = ablation_summary(ablation) if isinstance(ablation, dict) else None
    if headline is None:
        return ""
    geometry = (headline.get("true") or {}).get("axis_entropy") or {}
    behaviour = (headline.get("true") or {}).get("behaviour") or {}
    versus = headline.get("vs_random") or {}
    first = geometry.get("first_downstream_layer")
    layer_entry = (geometry.get("downstream") or {}).get(str(first)) or {}
    where = (versus.get("axis_r_downstream_change") or {}).get(str(first)) or {}
    mae_random = (versus.get("delta_mae_bits") or {}).get("random_mean")
    n_random = (versus.get("delta_mae_bits") or {}).get("n_random")
    text = (f"true axis, {headline.get('id')} (layers {', '.join(map(str, headline.get('layers') or []))}): "
            f"axis-entropy Spearman rho at layer {first} (the first after the edit) "
            f"{fmt(layer_entry.get('before'), '+.2f')} -> {fmt(layer_entry.get('after'), '+.2f')}; output: change "
            f"in MAE {fmt(estimate(behaviour.get('delta_mae_bits')), '+.3g')} bits, change in Pearson "
            f"{fmt(estimate(behaviour.get('delta_pearson')), '+.3g')}")
    if n_random:
        rank = "" if where.get("rank") is None else f" (|change| rank {where['rank']}/{where['of']}, p " \
                                                    f"{fmt(where.get('p_value'), '.2f')})"
        text += (f"; {n_random} random axes: rho change {fmt(where.get('random_mean'), '+.3f')}{rank}, MAE change "
                 f"{fmt(mae_random, '+.3g')} bits on average")
    return (f"<p><b>Interventions</b>: {esc(text)}.<br><i>{esc(headline.get('reading'))}</i></p>"
            f'<p class="summary">{esc(REF_ABLATION)}.</p>')


register_card("ablation", summary=_ablation_summary, gives="the headline entropy-axis intervention (section 8)")
