"""The ablation suite's report figures: entropy-axis interventions against random axes
(METHODS.md section 8). Imported by geomprobe.report through geomprobe.suites.base.load_faces;
registers its section with geomprobe.report.figures.register_figures and its statistics against
training step. REF_ABLATION is quoted by the suite's card (card.py) too."""

from __future__ import annotations

from dataclasses import dataclass, field

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from geomprobe.report.figures import (
    MEASURED,
    NULL_SHUFFLE,
    Figure,
    Table,
    ci_whiskers,
    esc,
    estimate,
    fmt,
    interval,
    register_figures,
    style,
    with_ci,
)
from geomprobe.report.rundata import RunData
from geomprobe.report.trajectories import register_trajectories

REF_ABLATION = ("paper III, Pythia-410M: axis-entropy r 0.27-0.32 falls to about 0 under the true single-layer cut "
                "while random cuts move it by about 0.01, and the multi-layer cut takes it from 0.27 to 0.07 with "
                "the SULA MAE and correlation changing under 1%")


def _op_title(name: str, condition: dict) -> str:
    if condition.get("op") == "cut":
        return f"{name} (lambda {fmt(condition.get('cut_lambda'), 'g')})"
    if condition.get("op") == "shift":
        return f"shift {fmt(condition.get('shift_c'), '+g')} sigma_u"
    return name


def _set_label(condition: dict) -> str:
    """'L1', or 'multi<br>8,12,16', then the layer the figure reads: '<br>-> L2'."""
    name, layers = str(condition.get("layer_set", "?")), condition.get("layers") or []
    label = esc(name)
    if len(layers) > 1 or name != f"L{layers[0] if layers else ''}":
        label += "<br>" + esc(",".join(map(str, layers)))
    first = _first_downstream(condition)
    return label + ("" if first is None else f"<br>-> L{first}")


def _first_downstream(condition: dict):
    geometry = (condition.get("true") or {}).get("axis_entropy") or {}
    return geometry.get("first_downstream_layer")


@dataclass
class _Pending:
    """Traces waiting to be added in one call (much faster than one add_trace each), and the legend keys shown."""

    traces: list = field(default_factory=list)  # (trace, row, column)
    shown: set = field(default_factory=set)

    def add(self, trace, row, col) -> None:
        self.traces.append((trace, row, col))

    def legend(self, key) -> bool:
        first = key not in self.shown
        self.shown.add(key)
        return first


def _ablation_effects(ablation: dict) -> Figure | None:
    conditions = [c for c in ablation.get("conditions") or [] if isinstance(c, dict) and c.get("true")]
    if not conditions:
        return None
    ops = list(dict.fromkeys(str(c.get("id", "?")).split("/")[0] for c in conditions))
    first_of = {op: next(c for c in conditions if str(c.get("id", "?")).split("/")[0] == op) for op in ops}
    n_ops = len(ops)
    fig = make_subplots(rows=2, cols=n_ops, horizontal_spacing=0.05 if n_ops > 2 else 0.1, vertical_spacing=0.12,
                        subplot_titles=[esc(_op_title(op, first_of[op])) for op in ops])
    settings = ablation.get("settings") or {}
    n_random = settings.get("n_random")
    pending = _Pending()
    for condition in conditions:
        column = ops.index(str(condition.get("id", "?")).split("/")[0]) + 1
        _condition_traces(pending, condition, column, n_random)
    fig.add_traces([t for t, _, _ in pending.traces], rows=[r for _, r, _ in pending.traces],
                   cols=[c for _, _, c in pending.traces])
    _effects_axes(fig, n_ops)
    style(fig, 640, titled=True)
    baseline = ablation.get("baseline") or {}
    n_prompts = (settings.get("n_per_k") or 0) * len(settings.get("k_values") or []) or "?"
    caption = (f"For each operation (columns) and layer set, the output's change in the SULA MAE against the "
               f"unperturbed pass (top; unperturbed MAE {with_ci(baseline.get('mae_bits'), '.3g')} bits, Pearson "
               f"{fmt(estimate(baseline.get('pearson_H_model_H_bayes')), '.4f')}) and the axis-entropy Spearman "
               f"rho(v'.u, H_model) re-extracted at the first layer after the edit, on that layer's own axis "
               f"(bottom, layer after the arrow; blue dash: unperturbed), the true entropy axis (red diamond) over "
               f"{n_random} random axes orthogonal to it (grey box and points; smallest attainable p "
               f"{fmt(settings.get('smallest_p'), '.2f')}), {n_prompts} SULA prompts, positions "
               f"{settings.get('positions', '?')}: look for the true axis standing apart from the random ones "
               f"downstream and at the output; the edited layer itself is not drawn, since a cut makes its rho 0 "
               f"by construction ({REF_ABLATION}).")
    return Figure("Entropy-axis interventions: true axis vs random axes", caption, fig,
                  _effects_notes(ablation, conditions))


def _condition_traces(pending: _Pending, condition: dict, column: int, n_random) -> None:
    """One condition's traces in its operation's column: the change in MAE (top) and the downstream rho (bottom)."""
    label = _set_label(condition)
    behaviour = condition["true"].get("behaviour") or {}
    downstream = ((condition["true"].get("axis_entropy") or {}).get("downstream") or {})
    versus = condition.get("vs_random") or {}
    random = condition.get("random") or []
    first = _first_downstream(condition)
    key = None if first is None else str(first)
    layer_entry = downstream.get(key) or {}
    panels = (
        (1, [(d.get("behaviour") or {}).get("delta_mae_bits") for d in random], behaviour.get("delta_mae_bits"),
         versus.get("delta_mae_bits") or {}, "change in MAE", "bits", ".3g"),
        (2, [(d.get("downstream_r") or {}).get(key) for d in random], layer_entry.get("after"),
         (versus.get("axis_r_downstream_change") or {}).get(key) or {}, f"axis-entropy rho at L{first}", "",
         "+.3f"),
    )
    for row, random_values, true_entry, where, what, unit, spec in panels:
        if row == 2 and key is None:
            continue
        random_values = [v for v in random_values if v is not None]
        if random_values:
            pending.add(go.Box(x=[label] * len(random_values), y=random_values, boxpoints="all", jitter=0.5,
                               pointpos=0, name=f"random axes ({n_random} per condition)", legendgroup="random",
                               showlegend=pending.legend("random"), marker=dict(color=NULL_SHUFFLE, size=4),
                               line=dict(color="#9a9a9a", width=1), fillcolor="rgba(127,127,127,0.15)",
                               hovertemplate=f"random axis: {what} %{{y:{spec}}} {unit}<extra></extra>"),
                        row=row, col=column)
        if row == 2 and layer_entry.get("before") is not None:
            pending.add(go.Scatter(x=[label], y=[layer_entry["before"]], mode="markers", name="unperturbed rho",
                                   legendgroup="base", showlegend=pending.legend("base"),
                                   marker=dict(symbol="line-ew-open", size=40, color=MEASURED, line=dict(width=3)),
                                   hovertemplate=f"unperturbed: rho at L{first} %{{y:+.3f}}<extra></extra>"),
                        row=row, col=column)
        value = estimate(true_entry)
        if value is None:
            continue
        if interval(true_entry):
            pending.add(ci_whiskers([label], [interval(true_entry)], "true axis 95% CI", "#c0392b",
                                    showlegend=pending.legend("ci"), legendgroup="ci"), row=row, col=column)
        ranked = "|change| " if row == 2 else ""
        rank = (f"{ranked}rank {where.get('rank')}/{where.get('of')}, p {fmt(where.get('p_value'), '.3f')}"
                if where.get("rank") is not None else "no random axes")
        pending.add(go.Scatter(x=[label], y=[value], mode="markers", name="true entropy axis", legendgroup="true",
                               showlegend=pending.legend("true"),
                               marker=dict(symbol="diamond", size=14, color="#c0392b",
                                           line=dict(width=1, color="white")),
                               hovertemplate=f"{esc(str(condition.get('id')))}, true axis: {what} "
                                             f"%{{y:{spec}}} {unit}<br>{rank}<extra></extra>"),
                    row=row, col=column)


def _effects_axes(fig, n_ops: int) -> None:
    """The zero lines, one rho scale across the operations, and the axis titles."""
    for column in range(1, n_ops + 1):
        fig.add_hline(y=0, line=dict(color="#888", width=1, dash="dot"), row=1, col=column)
        fig.add_hline(y=0, line=dict(color="#888", width=1, dash="dot"), row=2, col=column)
        if column > 1:  # one rho scale across the operations
            fig.update_yaxes(matches=f"y{n_ops + 1}", row=2, col=column)
    fig.update_yaxes(tickformat="~g", row=1)  # plain decimals: no SI 'µ' for changes of a few 1e-4 bits
    fig.update_yaxes(title_text="change in SULA MAE (bits)", row=1, col=1)
    fig.update_yaxes(title_text="axis-entropy rho, first layer after the edit", row=2, col=1)


def _effects_notes(ablation: dict, conditions: list[dict]) -> list[str]:
    """The figure's notes: each condition's reading, then the thresholds they read by."""
    notes = [f"{c.get('id')} (layers {', '.join(map(str, c.get('layers') or []))}): {c.get('reading')}"
             for c in conditions if c.get("reading")]
    thresholds = ablation.get("thresholds") or {}
    if thresholds:
        notes.append(f"readings: downstream |rho| < {thresholds.get('axis_r_zero')} counts as no correlation, a rho "
                     f"change of at least {thresholds.get('axis_r_change')} as a change; |change in MAE| < "
                     f"{thresholds.get('mae_bits')} bits and |change in Pearson| < {thresholds.get('pearson')} as "
                     f"behaviour unchanged; {thresholds.get('vs_random', '')}")
    return notes


def _ablation_downstream_table(ablation: dict) -> Table | None:
    """Every downstream layer of every condition: rho before and after, the random axes, rank and p."""
    rows = []
    for condition in ablation.get("conditions") or []:
        if not isinstance(condition, dict):
            continue
        geometry = (condition.get("true") or {}).get("axis_entropy") or {}
        versus = condition.get("vs_random") or {}
        per_layer = versus.get("axis_r_downstream_change") or {}
        edited = ",".join(map(str, condition.get("layers") or []))
        for layer, entry in (geometry.get("downstream") or {}).items():
            where = per_layer.get(layer) or {}
            mean, sd = where.get("random_mean"), where.get("random_sd")
            before = entry.get("before")
            random_r = "n/a" if mean is None or before is None else f"{before + mean:+.3f} +- {fmt(sd, '.3f')}"
            rows.append([str(condition.get("id")), edited, layer, fmt(before, "+.3f"), fmt(entry.get("after"), "+.3f"),
                         random_r, _rank_cell(where), fmt(where.get("p_value"), ".2f")])
        if len(geometry.get("downstream") or {}) > 1:
            where = versus.get("axis_r_mean_abs_change_downstream") or {}
            rows.append([str(condition.get("id")), edited, "mean |change| over these layers", "",
                         fmt(geometry.get("mean_abs_change_downstream"), ".3f"),
                         fmt(where.get("random_mean"), ".3f"), _rank_cell(where), fmt(where.get("p_value"), ".2f")])
    if not rows:
        return None
    settings = ablation.get("settings") or {}
    caption = (f"The axis-entropy Spearman rho(v'.u, H_model) at every layer after the last edited one, each on its "
               f"own axis, unperturbed and under the true axis's edit, against {settings.get('n_random')} random axes "
               f"(mean +- sd of their rho; the true axis's rank by |change| among all, and the empirical p, smallest "
               f"attainable {fmt(settings.get('smallest_p'), '.2f')}): per layer, never averaged over layers with "
               f"signs; the edited layers' own rho (0 by construction under a cut) is in results.json, "
               f"at_edited_layers.")
    return Table("Entropy-axis interventions: downstream layers", caption,
                 ["condition", "edited", "layer", "unperturbed rho", "true axis rho", "random axes rho",
                  "|change| rank", "p"], rows)


def _rank_cell(where: dict) -> str:
    return "n/a" if where.get("rank") is None else f"{where['rank']}/{where['of']}"


def ablation_figures(run: RunData) -> list[Figure | Table]:
    ablation = run.results.get("ablation")
    if not ablation:
        return []
    items = [_ablation_effects(ablation), _ablation_downstream_table(ablation)]
    return [item for item in items if item is not None]


register_figures("Entropy-axis interventions", ("ablation",), ablation_figures)
register_trajectories("ablation", (("delta_mae_bits[headline]", "true-axis cut: change in the SULA MAE (bits)"),
                                   ("axis_r_change[headline]",
                                    "true-axis cut: change of the axis-entropy rho after the edit")))
