"""The report's figures: the machinery every family draws with, and the report's own families.

A family is one function, RunData -> list[Figure | Table], under a section heading. A family draws
what the results on disk say and nothing else: no statistic is computed here (statistics live in
geomprobe.analysis and the suites). A family whose inputs are absent returns []; the page says what
is missing.

A suite's figures live in its folder's figures.py (geomprobe/suites/<name>/figures.py), which calls
`register_figures("Section", ("suite",), name_figures)` when imported; geomprobe.suites.base.load_faces
imports those modules (run_figure_families), so nothing here imports a suite's figures by name. A
plug-in suite registers its families the same way. This module keeps what the report draws for
every run whatever its suites: the untrained-copies panels, the wind-tunnel figures and the table of
the suites no family draws (RUN_FIGURES), and the cross-run chart and trajectories.

Captions are one sentence: what to look for, with the numbers read from the results and the
papers' reference values (METHODS.md sections 2-9), which are references, never results.
"""

from __future__ import annotations

import html
import math
import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Callable

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from geomprobe.compare import ablation_headline, paper_reference

from .rundata import RunData

esc = html.escape  # strings from files shown inside plots (plotly reads a few HTML tags)

MEASURED = "#1f5fa8"
SECOND = "#d9661f"
NULL_SHUFFLE = "#7f7f7f"
NULL_GAUSSIAN = "#b0b0b0"
BASELINES = {"analytic": "#2ca02c", "empirical": "#98df8a", "init": "#9467bd", "step0": "#e377c2"}
PALETTE = ["#1f5fa8", "#d9661f", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22"]

# Paper reference values (METHODS.md) that the machinery reads (the wind-tunnel figures; the verdict
# panel and the ablation suite's figures); drawn or quoted as references only. A suite's own live in
# its figures.py.
REF_WINDTUNNEL = {
    "bijection": "paper I: entropy MAE 3e-3 bits (v1) / 0.007 (v3) for the transformer, about 1.85 for an MLP",
    "hmm": "paper I v3: entropy MAE 0.049 bits for the transformer, 0.024 Mamba, 0.411 LSTM, 0.40 MLP",
    "recall": "paper I v3: accuracy 100% transformer, 97.8% Mamba, 0.5% LSTM",
    "sula": "the SULA tunnel's optimum is the exact posterior (METHODS.md section 9)",
}
REF_ABLATION = ("paper III, Pythia-410M: axis-entropy r 0.27-0.32 falls to about 0 under the true single-layer cut "
                "while random cuts move it by about 0.01, and the multi-layer cut takes it from 0.27 to 0.07 with "
                "the SULA MAE and correlation changing under 1%")


@dataclass
class Figure:
    title: str
    caption: str  # one sentence: what to look for, and the paper's reference value where there is one
    fig: go.Figure
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Cell:
    """A table cell with more than one string (all plain text; html.py escapes each): `detail`, a
    second line in small type; `mark`, a short tag after the text; `title`, a tooltip; `css`, the
    cell's class ("paper" for a reference value)."""
    text: str
    detail: str = ""
    mark: str = ""
    title: str = ""
    css: str = ""


@dataclass
class Table:
    """A small HTML table among a family's figures (numbered apart from them). Cells are plain
    text or Cells (html.py escapes them); `reference` is an optional last row of paper values;
    `lead`, a paragraph above the table (a note the reader needs before the numbers)."""
    title: str
    caption: str
    header: list[str]
    rows: list[list[str | Cell]]
    reference: list[str] | None = None
    notes: list[str] = field(default_factory=list)
    lead: str = ""


@dataclass(frozen=True)
class FigureFamily:
    section: str
    suites: tuple[str, ...]  # the <suite>/results.json files it draws (to tell what stays undrawn)
    draw: Callable[[RunData], list[Figure | Table]]
    meta: Callable[[RunData], str] | None = None  # a line under the section heading (e.g. the definitions used)


# --------------------------------------------------------------------------------------------
# small drawing helpers


def fmt(value, spec: str = ".3f") -> str:
    return "n/a" if value is None else format(value, spec)


def pct(value) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


REPORT_TEMPLATE = "plotly_white"
_deferred_template = False  # True while report.html builds a page: the template is written once there


@contextmanager
def deferred_template():
    """While building a page: figures get no template of their own (plotly validates and copies a
    template into every figure, most of a figure's build time); the page adds REPORT_TEMPLATE once."""
    import plotly.io as pio

    global _deferred_template
    previous, was = pio.templates.default, _deferred_template
    pio.templates.default, _deferred_template = "none", True
    try:
        yield
    finally:
        pio.templates.default, _deferred_template = previous, was


def style(fig: go.Figure, height: int = 420, titled: bool = False, **layout) -> go.Figure:
    """The report's look; the legend sits in the top margin of the figure (not over subplot
    titles, which `titled` makes room for)."""
    defaults = dict(template=REPORT_TEMPLATE, height=height, margin=dict(l=70, r=30, t=80 if titled else 50, b=50),
                    legend=dict(orientation="h", yref="container", y=0.99, yanchor="top", x=0,
                                traceorder="normal"), font=dict(size=12))
    if _deferred_template:
        del defaults["template"]
    fig.update_layout(**{**defaults, **layout})
    return fig


# one labelled tick per decade, written as powers of ten (no 'µ' or crowded minor digits)
LOG_AXIS = dict(type="log", dtick=1, exponentformat="power")


def log_axis(values) -> dict:
    """LOG_AXIS when the positive values span more than a decade; within one decade plotly's own
    log ticks (one tick per decade would leave the axis unlabelled)."""
    positive = [v for v in values if v is not None and v > 0]
    if positive and max(positive) / min(positive) > 10:
        return LOG_AXIS
    return dict(type="log", exponentformat="power")


def ci_whiskers(x: list, cis: list, name: str, color: str, showlegend: bool = True, **kwargs) -> go.Scatter:
    """Vertical segments from each CI's low to its high end (None entries are skipped): no
    arithmetic on the estimate, so a bootstrap interval that excludes it is drawn as it is."""
    xs, ys = [], []
    for xi, ci in zip(x, cis):
        if ci is None or ci[0] is None or ci[1] is None:
            continue
        xs += [xi, xi, None]
        ys += [ci[0], ci[1], None]
    return go.Scatter(x=xs, y=ys, mode="lines", line=dict(color=color, width=3), opacity=0.45, name=name,
                      showlegend=showlegend, hoverinfo="skip", **kwargs)


def hline_trace(x0, x1, y, name: str, color: str, dash: str = "dash", line_width: float = 2,
                **kwargs) -> go.Scatter:
    return go.Scatter(x=[x0, x1], y=[y, y], mode="lines", line=dict(color=color, dash=dash, width=line_width),
                      name=name, hovertemplate=f"{name}: {y:.4g}<extra></extra>", **kwargs)


_PAPER_PERCENT = re.compile(r"(\d+(?:\.\d+)?)(?:\s*-\s*(\d+(?:\.\d+)?))?\s*%")


def coinciding(levels: dict[str, float], spec: str = ".3f") -> dict[str, list[str]]:
    """Horizontal reference lines drawn at the same value to the precision shown (they would hide
    one another): {value as shown: [names]} for every value two or more names share."""
    groups: dict[str, list[str]] = {}
    for name, value in levels.items():
        groups.setdefault(format(value, spec), []).append(name)
    return {text: names for text, names in groups.items() if len(names) > 1}


def paper_range(text: str | None) -> tuple[float, float] | None:
    """'99.7%' -> (0.997, 0.997); '15-20%' -> (0.15, 0.20); '~80%' -> (0.8, 0.8); else None."""
    match = _PAPER_PERCENT.search(text or "")
    if match is None:
        return None
    low = float(match.group(1)) / 100
    high = float(match.group(2)) / 100 if match.group(2) else low
    return low, high


def model_reference(run: RunData) -> dict | None:
    model = (run.manifest or {}).get("model") or {}
    return paper_reference(f"{model.get('spec')} {model.get('source')}") if model else None


def is_windtunnel(run: RunData) -> bool:
    return run.windtunnel is not None


def estimate(entry):
    """The number of a results.json entry: an Estimate {"value", "ci95", "method", "n"} (or a bare number)."""
    if isinstance(entry, dict):
        return entry.get("value")
    return entry if isinstance(entry, (int, float)) else None


def interval(entry) -> list | None:
    ci = entry.get("ci95") if isinstance(entry, dict) else None
    return ci if ci and len(ci) == 2 and ci[0] is not None and ci[1] is not None else None


def with_ci(entry, spec: str = ".3f") -> str:
    """'0.123 [0.100, 0.150]' from an Estimate {"value", "ci95", ...}; 'n/a' when there is no number."""
    value = estimate(entry)
    if value is None:
        return "n/a"
    ci = interval(entry)
    return format(value, spec) + (f" [{format(ci[0], spec)}, {format(ci[1], spec)}]" if ci else "")


# --------------------------------------------------------------------------------------------
# prompts and their per-prompt arrays in hover labels and colours


def entropy_for(run: RunData, relative: str, n: int):
    entropy = run.array(relative)
    return entropy if entropy is not None and entropy.shape == (n,) else None


HOVER_TEXT_CHARS = 60  # a prompt's text in a hover label, shortened


def short_text(text, limit: int = HOVER_TEXT_CHARS) -> str:
    text = " ".join(str(text or "").split())
    return text if len(text) <= limit else text[:limit - 1] + "\u2026"


def prompt_hover(rows: list[dict] | None, n: int, compact: bool = False) -> tuple[list | None, str]:
    """customdata and a hovertemplate piece naming each prompt: id, shortened text (dropped in a
    compact report of several runs) and k where the row has one. (None, "") when the rows do
    not match the n points drawn."""
    if not rows or len(rows) != n:
        return None, ""
    has_k = any("k" in row for row in rows)
    data = [[esc(str(row.get("id", ""))), "" if compact else esc(short_text(row.get("text"))),
             "" if row.get("k") is None else str(row.get("k"))] for row in rows]
    template = "%{customdata[0]}" + ("" if compact else "<br>%{customdata[1]}") + ("<br>k = %{customdata[2]}"
                                                                                  if has_k else "")
    return data, template + "<br>"


# --------------------------------------------------------------------------------------------
# wind tunnels (METHODS.md section 9; paper II's frame-precision dissociation)


def _per_position(metrics: dict) -> Figure | None:
    evaluations = {name: score for name, score in (metrics.get("eval") or {}).items() if score.get("per_position")}
    if not evaluations:
        return None
    kl_values = []
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08, row_heights=[0.65, 0.35])
    for index, (name, score) in enumerate(evaluations.items()):
        color = PALETTE[index % len(PALETTE)]
        positions = sorted(score["per_position"], key=int)
        rows = [score["per_position"][p] for p in positions]
        x = [int(p) for p in positions]
        name = esc(name)
        fig.add_trace(go.Scatter(x=x, y=[r.get("H_bayes_bits") for r in rows], mode="lines+markers",
                                 name=f"{name}: Bayes", line=dict(color=color, dash="dash", width=2),
                                 marker=dict(symbol="line-ew-open", size=16, color=color, line=dict(width=2))),
                      row=1, col=1)
        fig.add_trace(go.Scatter(x=x, y=[r.get("H_model_bits") for r in rows], mode="markers", name=f"{name}: model",
                                 marker=dict(color=color, size=8, symbol="circle-open", line=dict(width=2))),
                      row=1, col=1)
        kl_values += [r.get("kl_bits") for r in rows]
        fig.add_trace(go.Scatter(x=x, y=[r.get("kl_bits") for r in rows], mode="lines+markers",
                                 name=f"{name}: KL(Bayes||model)", line=dict(color=color, width=1.5),
                                 marker=dict(size=5), showlegend=False), row=2, col=1)
    fig.update_yaxes(title_text="predictive entropy (bits)", row=1, col=1)
    fig.update_yaxes(title_text="KL (bits, log)", **log_axis(kl_values), row=2, col=1)
    fig.update_xaxes(title_text="position in the sequence (supervised positions)", row=2, col=1)
    style(fig, 520)
    first = next(iter(evaluations.values()))
    task = metrics.get("task", "?")
    accuracy = first.get("accuracy_determined")
    caption = (f"Model predictive entropy (circles) against the exact Bayes entropy (dashes) at every supervised "
               f"position, and KL(Bayes||model) below: look for circles on the dashes, held-out entropy MAE "
               f"{fmt(first.get('entropy_mae_bits'), '.4f')} bits, KL {fmt(first.get('kl_bits'), '.4f')} bits"
               + (f", accuracy where Bayes is one-hot {pct(accuracy)}" if accuracy is not None else "")
               + f" ({REF_WINDTUNNEL.get(task, 'METHODS.md section 9')}).")
    return Figure(f"Wind tunnel ({task}, {metrics.get('arch')}): entropy vs Bayes per position", caption, fig)


def _training_curve(metrics: dict) -> Figure | None:
    history = metrics.get("history") or []
    if len(history) < 2:
        return None
    steps = [h["step"] for h in history]
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.1,
                        subplot_titles=("training loss", "training-batch entropy MAE (bits)"))
    fig.add_trace(go.Scatter(x=steps, y=[h.get("loss") for h in history], mode="lines", name="loss",
                             line=dict(color=MEASURED, width=2)), row=1, col=1)
    fig.add_trace(go.Scatter(x=steps, y=[h.get("train_entropy_mae_bits") for h in history], mode="lines",
                             name="entropy MAE", line=dict(color=SECOND, width=2)), row=1, col=2)
    fig.update_xaxes(title_text="step")
    fig.update_yaxes(**log_axis([h.get("train_entropy_mae_bits") for h in history]), row=1, col=2)
    style(fig, 380, titled=True, showlegend=False)
    target = (metrics.get("config") or {}).get("target")
    caption = (f"Loss and the running entropy MAE on training batches over {metrics.get('steps')} steps "
               f"({fmt(metrics.get('train_seconds'), '.0f')} s, target '{target}'): "
               f"look for the MAE still falling at the end (more training would help) or flat (converged); "
               f"final {fmt(metrics.get('final_train_entropy_mae_bits'), '.4f')} bits.")
    return Figure("Wind tunnel: training curves", caption, fig)


def dissociation(curves: list) -> Figure | None:
    if not curves:
        return None
    steps = [c["step"] for c in curves]
    fig = make_subplots(rows=3, cols=1, shared_xaxes=True, vertical_spacing=0.06,
                        subplot_titles=("frame: attention distance to the final checkpoint (total variation)",
                                        "precision: last-layer value geometry", "calibration: held-out error"))
    n_layers = max(len(c.get("attention_distance_to_final") or []) for c in curves)
    for layer in range(n_layers):
        shade = 0.35 + 0.65 * layer / max(1, n_layers - 1)  # deeper layers darker
        fig.add_trace(go.Scatter(x=steps, y=[(c.get("attention_distance_to_final") or [None] * n_layers)[layer]
                                             for c in curves], mode="lines+markers", name=f"layer {layer}",
                                 legendgroup="frame", legendgrouptitle_text="frame",
                                 line=dict(color=f"rgba(31,95,168,{shade:.2f})", width=2), marker=dict(size=5)),
                      row=1, col=1)
    for key, label, color in (("pc1", "value PC1", SECOND), ("pc12", "value PC1+PC2", "#f2a541"),
                              ("abs_rho_pc1_bayes_entropy", "|rho(PC1, H_bayes)|", "#2ca02c")):
        fig.add_trace(go.Scatter(x=steps, y=[c.get(key) for c in curves], mode="lines+markers", name=label,
                                 legendgroup="precision", legendgrouptitle_text="precision",
                                 line=dict(color=color, width=2), marker=dict(size=5)), row=2, col=1)
    for key, label, color in (("entropy_mae_bits", "entropy MAE (bits)", "#8c564b"),
                              ("kl_bits", "KL (bits)", "#7f7f7f")):
        fig.add_trace(go.Scatter(x=steps, y=[c.get(key) for c in curves], mode="lines+markers", name=label,
                                 legendgroup="calibration", legendgrouptitle_text="calibration",
                                 line=dict(color=color, width=2), marker=dict(size=5)), row=3, col=1)
    for row in (1, 2, 3):
        fig.update_xaxes(type="log", row=row, col=1)
    fig.update_xaxes(title_text="training step (log)", row=3, col=1)
    fig.update_yaxes(**log_axis([c.get(k) for c in curves for k in ("entropy_mae_bits", "kl_bits")]), row=3,
                     col=1)
    style(fig, 700, titled=True, legend=dict(orientation="v", x=1.02, y=1, yref="paper", yanchor="top",
                                             traceorder="grouped"))
    caption = ("Across the saved checkpoints, each layer's attention distance to the final checkpoint against the "
               "value-manifold statistics and the held-out error: paper II predicts a frame-precision "
               "dissociation, the attention frame (top) settling well before the value geometry and the "
               "calibration (middle, bottom) stop changing.")
    return Figure("Wind tunnel: frame-precision dissociation over training", caption, fig)


def windtunnel_figures(run: RunData) -> list[Figure]:
    figures = []
    if run.windtunnel is not None:
        figures += [_per_position(run.windtunnel), _training_curve(run.windtunnel)]
    figures.append(dissociation(run.curves))
    return [f for f in figures if f is not None]


# --------------------------------------------------------------------------------------------
# read by the machinery (the verdict panel) as well as by the ablation suite's figures


def ablation_summary(ablation: dict) -> dict | None:
    """The headline condition: the true cut on the largest layer set (paper III's multi-layer
    cut), else the first condition (geomprobe.compare.ablation_headline, which the tables use too)."""
    return ablation_headline(ablation)


# --------------------------------------------------------------------------------------------
# every suite compared with untrained copies, and the suites no family draws


UNTRAINED_TITLES = {
    "geometry": {"pc1": "value manifold PC1", "pc12": "value manifold PC1+PC2",
                 "keys": "mean key |cos| (lower: more orthogonal)", "focusing": "attention focusing"},
    "sula": {"mae_bits": "SULA MAE, bits (lower: better)", "abs_rho_pc1_H_bayes_given_k": "|rho(PC1, H_bayes) given k|"},
    "mechanisms": {"evidence_mass": "evidence mass, last layer", "cos_evidence_minus_other":
                   "cos evidence - other, last layer", "focusing": "attention focusing"},
}


def _untrained_panel(run: RunData, suite: str) -> Figure | None:
    nulls = (run.results.get(suite) or {}).get("untrained_null")
    if not nulls:
        return None
    panels = [(name, cmp) for name, cmp in (nulls.get("comparisons") or {}).items()
              if cmp.get("status") not in ("not measured", "not tested")]
    if not panels:
        return None
    titles = UNTRAINED_TITLES.get(suite, {})

    def title(name: str, cmp: dict) -> str:
        return titles.get(name) or (f"PC1+PC2 gain, {name[len('pc12_gain_'):]}" if name.startswith("pc12_gain_")
                                    else cmp.get("statistic") or name)

    fig = make_subplots(rows=1, cols=len(panels), subplot_titles=[title(n, c) for n, c in panels])
    names = [m.get("name", f"null {i}") for i, m in enumerate(nulls.get("models") or [])]
    for column, (name, cmp) in enumerate(panels, start=1):
        values = cmp.get("nulls") or []
        fig.add_trace(go.Scatter(x=["untrained"] * len(values), y=values, mode="markers", name="untrained copies",
                                 marker=dict(color=NULL_SHUFFLE, size=9), text=names[:len(values)],
                                 hovertemplate="%{text}: %{y:.3f}<extra></extra>", showlegend=column == 1),
                      row=1, col=column)
        fig.add_trace(go.Scatter(x=["model"], y=[cmp.get("model")], mode="markers", name="model",
                                 marker=dict(color=MEASURED, size=12, symbol="diamond"),
                                 hovertemplate=f"model: %{{y:.3f}}<br>{esc(cmp.get('status', ''))}<extra></extra>",
                                 showlegend=column == 1), row=1, col=column)
    verdicts = "; ".join(f"{title(n, c)}: {c.get('status')} (difference {with_ci(c.get('difference'), '+.3f')})"
                         for n, c in panels)
    rule = ("A verdict criterion holds only when the paired-bootstrap CI of model minus null excludes 0 on the "
            "favourable side." if suite == "geometry" else
            "'above untrained' needs the paired-bootstrap CI of model minus null to exclude 0 on the favourable side "
            "and the model to lie outside where one more untrained copy would fall.")
    return Figure(title=f"{suite}: against untrained copies of the same architecture", fig=style(fig, height=360),
                  caption=(f"Headline statistics of the {suite} suite for the model (diamond) and for each untrained "
                           f"null model ({esc(nulls.get('description'))}; grey), on the same inputs: look for the "
                           f"model standing clear of the grey points. {verdicts}. {rule}"))


def untrained_figures(run: RunData) -> list[Figure | Table]:
    """Each suite's headline statistics for the model and each untrained null model."""
    figures = [_untrained_panel(run, suite) for suite in ("geometry", "domain", "sula", "mechanisms")]
    return [figure for figure in figures if figure is not None]


def _headline_rows(results: dict, prefix: str = "", depth: int = 0) -> list[list[str]]:
    """(field, value, 95% CI, how) for the scalars and estimates of a results dict, two levels deep."""
    rows = []
    for key, value in results.items():
        if key in ("schema_version", "suite", "model", "geomprobe_version"):
            continue
        name = f"{prefix}{key}"
        if isinstance(value, dict) and "value" in value and "ci95" in value:
            ci = value.get("ci95") or [None, None]
            rows.append([name, fmt(value.get("value")) if isinstance(value.get("value"), (int, float)) else
                         str(value.get("value")), "" if ci[0] is None else f"[{fmt(ci[0])}, {fmt(ci[1])}]",
                         str(value.get("method", ""))])
        elif isinstance(value, dict) and depth < 1:
            rows += _headline_rows(value, f"{name}.", depth + 1)
        elif isinstance(value, bool) or isinstance(value, str):
            rows.append([name, str(value), "", ""])
        elif isinstance(value, (int, float)):
            rows.append([name, fmt(value) if isinstance(value, float) else str(value), "", ""])
        elif isinstance(value, list) and value and all(isinstance(v, (int, float)) for v in value) and len(value) <= 12:
            rows.append([name, ", ".join(fmt(v) if isinstance(v, float) else str(v) for v in value), "", ""])
    return rows


def other_suite_figures(run: RunData) -> list[Figure | Table]:
    """A table of headline numbers for each suite no figure family draws (e.g. a plugin suite)."""
    drawn = {suite for family in run_figure_families() for suite in family.suites}
    tables = []
    for suite, results in run.results.items():
        if suite in drawn:
            continue
        rows = _headline_rows(results)
        if rows:
            tables.append(Table(title=f"{suite} suite: headline numbers", caption=(
                f"The scalar fields and estimates of {suite}/results.json as written (no figure function is "
                "registered for this suite: geomprobe.report.figures.register_figures adds one)."),
                header=["field", "value", "95% CI", "how"], rows=rows))
    return tables


# --------------------------------------------------------------------------------------------
# geomprobe's definitions beside the papers' released code's (--definitions paper-code, METHODS.md
# section 11): results["paper_code"]["rows"], each written by geomprobe.paper_code.side_by_side_row

PAPER_CODE_TITLE = "geomprobe's definitions and the papers' released code"
# each quantity as the report's other tables write it ("%": pct); rho rows "+.2f", Pearson ".4f"
PAPER_CODE_SPECS = {"value_pc1_fraction": "%", "attention_focusing": "%", "participation_ratio": ".2f",
                    "key_orthogonality": ".4f", "sula_mae": ".3g"}


def paper_code_of(results) -> dict | None:
    """results["paper_code"] when a suite ran with --definitions paper-code, else None."""
    table = results.get("paper_code") if isinstance(results, dict) else None
    return table if isinstance(table, dict) and isinstance(table.get("rows"), list) else None


def _paper_code_rows(results) -> list[dict]:
    table = paper_code_of(results)
    return [row for row in (table or {}).get("rows") or [] if isinstance(row, dict)]


def _real(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def paper_code_number(row: dict, value) -> str:
    """A side-by-side number as the report's other tables write its quantity: '-' for none (not a
    geomprobe headline, no published figure), 'n/a' for a non-finite one."""
    if value is None:
        return "-"
    if _real(value) is None:
        return "n/a"
    quantity, label = str(row.get("quantity") or ""), str(row.get("label") or "")
    spec = (".4f" if label.startswith("Pearson") else "+.2f" if quantity.startswith("rho_")
            else PAPER_CODE_SPECS.get(quantity, ".3g"))
    return pct(value) if spec == "%" else format(value, spec)


def definitions_line(run: RunData, suite: str, where: str = "") -> str:
    """The section's metadata line when `suite` ran with --definitions paper-code (or
    paper-code-as-released), else ''."""
    results = run.results.get(suite) or {}
    table = paper_code_of(results)
    if table is None:
        return ""
    definitions = results.get("definitions") or table.get("definitions") or "paper-code"
    return f"{suite} suite \u00b7 definitions: geomprobe + {definitions} side by side{where}"


def _paper_code_reading(rows: list[dict]) -> str:
    """What to look for in these rows: where the two definitions part most (the gap relative to the
    larger magnitude, among the rows printed differently), where their signs differ, and whether
    the rows of one definition agree as printed."""
    both = [row for row in rows if _real(row.get("geomprobe")) is not None and _real(row.get("paper_code")) is not None]

    def printed(row, key):
        return paper_code_number(row, row.get(key))

    def named(labelled):
        names = [f'"{row.get("label")}"' for row in labelled]
        return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"

    differ = [row for row in both if not row.get("same_definition") and printed(row, "geomprobe")
              != printed(row, "paper_code")]
    flipped = [row for row in both if row["geomprobe"] * row["paper_code"] < 0]
    parts = []
    if differ:
        def gap(row):
            return abs(row["geomprobe"] - row["paper_code"]) / max(abs(row["geomprobe"]), abs(row["paper_code"]))

        top = max(differ, key=gap)
        parts.append(f"here they part most on {named([top])} (geomprobe {printed(top, 'geomprobe')}, paper code "
                     f"{printed(top, 'paper_code')}{': the sign differs' if top in flipped else ''})")
        flipped = [row for row in flipped if row is not top]
    elif any(not row.get("same_definition") for row in both):
        parts.append("here the two definitions give the same numbers to the precision shown")
    if flipped:
        parts.append(f"the sign differs for {named(flipped)}")
    only = [row for row in rows if row.get("geomprobe") is None and row.get("paper_code") is not None]
    if only:
        parts.append(f"{named(only)} {'is' if len(only) == 1 else 'are'} the released code's reading alone, not a "
                     "geomprobe headline")
    same = [row for row in both if row.get("same_definition")]
    apart = [row for row in same if printed(row, "geomprobe") != printed(row, "paper_code")]
    if apart:
        parts.append(f"rows marked same definition should agree to rounding, and {named(apart)} "
                     f"{'does' if len(apart) == 1 else 'do'} not: worth reporting")
    elif same:
        parts.append("the rows marked same definition agree to rounding, as they should")
    return "; ".join(parts)


def paper_code_table(results: dict, suite: str, name: str) -> Table | None:
    """The side-by-side table of a suite run with --definitions paper-code (None otherwise)."""
    table, rows = paper_code_of(results), _paper_code_rows(results)
    if table is None or not rows:
        return None
    body = [[Cell(str(row.get("label") or row.get("quantity")), mark="same definition" if row.get("same_definition")
                  else "", title=f"quantity {row.get('quantity')} (METHODS.md section 11)"),
             Cell(paper_code_number(row, row.get("geomprobe")), detail=str(row.get("geomprobe_how") or "")),
             Cell(paper_code_number(row, row.get("paper_code")), detail=str(row.get("paper_code_how") or ""),
                  title=str(row.get("released_file") or "")),
             Cell(paper_code_number(row, row.get("published")), title=str(row.get("published_source") or ""),
                  css="paper")]
            for row in rows]
    caption = (f"Each headline number under geomprobe's definition (as the {suite} suite reports it) and under the "
               f"papers' released code's, both computed by geomprobe on the same prompts and arrays, with the "
               f"published figure; the small type says how each is defined: look for where the definitions part: "
               f"{_paper_code_reading(rows)}.")
    notes = [f"published, {row.get('label')}: {row.get('published_source')}" for row in rows
             if row.get("published") is not None and row.get("published_source")]
    caption += (" The published figures are the papers' or their code's on the papers' own models (sources below), "
                "references, never results." if notes else " No row has a published figure.")
    return Table(f"{name}: {PAPER_CODE_TITLE}", caption, ["quantity", "geomprobe", "paper code", "published"], body,
                 notes=notes, lead=str(table.get("note") or ""))


def paper_code_across_runs(entries: list[tuple[str, str, dict]]) -> Table | None:
    """One row per (run label, suite, results) with a side-by-side table: its first PC1-fraction
    row and its first rho(PC1, entropy) row under both definitions, with the published figure."""
    body = []
    for label, suite, results in entries:
        rows = _paper_code_rows(results)
        if not rows:
            continue
        pc1 = next((row for row in rows if row.get("quantity") == "value_pc1_fraction"), None)
        rho = next((row for row in rows if str(row.get("quantity") or "").startswith("rho_pc1_entropy")), None)
        picked = [f"{what}: {row.get('label')}" for what, row in (("PC1", pc1), ("rho", rho)) if row is not None]
        cells: list[str | Cell] = [label, Cell(suite, detail="; ".join(picked))]
        for row in (pc1, rho):
            cells += (["-", "-", "-"] if row is None else [
                Cell(paper_code_number(row, row.get("geomprobe")), title=str(row.get("geomprobe_how") or "")),
                Cell(paper_code_number(row, row.get("paper_code")), title=str(row.get("paper_code_how") or "")),
                Cell(paper_code_number(row, row.get("published")), title=str(row.get("published_source") or ""),
                     css="paper")])
        body.append(cells)
    if not body:
        return None
    caption = ("The value-manifold PC1 fraction and rho(PC1, entropy) of every suite run with --definitions "
               "paper-code, under geomprobe's definition and the released code's (hover for how each is defined; "
               "the run's own section has every row): look for whether the two definitions part by the same "
               "amount in every run, or one of them alone moves between models or checkpoints; the published "
               "figures are references, never results.")
    header = ["run (model@revision)", "suite", "PC1: geomprobe", "PC1: paper code", "PC1: published",
              "rho: geomprobe", "rho: paper code", "rho: published"]
    return Table(f"Across runs: {PAPER_CODE_TITLE}", caption, header, body)


# The machinery's own families, drawn after every suite's (run_figure_families).
RUN_FIGURES: list[FigureFamily] = [
    FigureFamily("Against untrained copies", ("geometry", "domain", "sula", "mechanisms"), untrained_figures),
    FigureFamily("Wind tunnel", (), windtunnel_figures),
    FigureFamily("Other suites", (), other_suite_figures),
]

_SUITE_FIGURES: list[FigureFamily] = []  # register_figures: suites' figures faces and plug-ins


def register_figures(section: str, suites: tuple[str, ...], draw: Callable[[RunData], list[Figure | Table]],
                     meta: Callable[[RunData], str] | None = None) -> None:
    """Draw a suite's results in the report under `section`: draw(run) returns Figures and Tables
    (run.results[suite] is its results.json, `suites` the ones it draws); meta(run), if given, a
    line under the section heading ('' for none). Placed before the machinery's own sections
    (run_figure_families). A section name already taken is a ValueError."""
    taken = {family.section for family in (*_SUITE_FIGURES, *RUN_FIGURES)}
    if section in taken:
        raise ValueError(f"register_figures: a section {section!r} is already registered")
    _SUITE_FIGURES.append(FigureFamily(section, tuple(suites), draw, meta))


def run_figure_families() -> list[FigureFamily]:
    """Every family the report draws for a run, in page order: the families suites registered
    (each suite folder's figures face loaded first, geomprobe.suites.base.load_faces), ordered by
    their first suite's place in the suite registry and, within one suite, as registered (a family
    of no registered suite after them); then RUN_FIGURES (untrained copies, wind tunnel, other
    suites)."""
    from geomprobe.suites.base import SUITES, load_faces

    load_faces("figures")
    order = {name: rank for rank, name in enumerate(SUITES)}

    def rank(family: FigureFamily) -> int:
        return order.get(family.suites[0], len(order)) if family.suites else len(order)

    return sorted(_SUITE_FIGURES, key=rank) + RUN_FIGURES

# --------------------------------------------------------------------------------------------
# cross-model (paper III Table 2): the three signatures, each a fraction on one 0-1 axis


def signature_chart(rows: list[dict], thresholds: dict) -> Figure:
    """rows: geomprobe.compare.row_for(...) of each run (bars named by its `label`, model@revision,
    unique per run, so runs of one model at several revisions keep a bar each); thresholds: the first
    run's verdict thresholds."""
    names = [esc(row.get("label") or row["model"]) for row in rows]
    panels = (("value manifold PC1+PC2 (mixed)", "pc12_mixed", thresholds.get("pc_threshold"), "pc12_mixed"),
              (f"fraction of layers with key |cos| < {fmt(thresholds.get('orth_threshold'), '.2f')}",
               "keys_fraction_below", thresholds.get("orth_layer_fraction"), None),
              ("attention focusing 1 - H(L-1)/H(0)", "focusing", thresholds.get("focusing_threshold"), "focusing"))
    fig = make_subplots(rows=1, cols=3, shared_yaxes=True, horizontal_spacing=0.04,
                        subplot_titles=[p[0] for p in panels])
    for column, (title, key, threshold, paper_key) in enumerate(panels, start=1):
        fig.add_trace(go.Bar(x=names, y=[row.get(key) for row in rows], name="measured",
                             marker_color=[PALETTE[i % len(PALETTE)] for i in range(len(rows))],
                             showlegend=False, hovertemplate="%{x}: %{y:.3f}<extra></extra>"), row=1, col=column)
        if threshold is not None:
            fig.add_hline(y=threshold, line=dict(color="#444", dash="dash", width=2), row=1, col=column)
        if paper_key:
            for index, row in enumerate(rows):
                span = paper_range((row.get("paper_iii") or {}).get(paper_key))
                if span:
                    fig.add_trace(go.Scatter(x=[names[index], names[index]], y=list(span), mode="markers+lines",
                                             marker=dict(symbol="diamond", size=11, color="#c0392b"),
                                             line=dict(color="#c0392b", width=2), name="paper III",
                                             legendgroup="paper", showlegend=False,
                                             hovertemplate=f"paper III: {row['paper_iii'][paper_key]}<extra></extra>"),
                                  row=1, col=column)
    fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", line=dict(color="#444", dash="dash", width=2),
                             name="verdict threshold"))
    fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", marker=dict(symbol="diamond", size=11,
                                                                              color="#c0392b"),
                             name="paper III reference"))
    fig.update_yaxes(range=[min([0.0] + [r.get("focusing") or 0.0 for r in rows]) - 0.02, 1.05])
    style(fig, 440, titled=True, bargap=0.35)
    caption = ("The three signatures of the verdict for every model on one 0-1 scale, each against its verdict "
               "threshold (dashed): look for bars above the line for the value manifold and focusing, and for a "
               "large fraction of layers with orthogonal keys (red diamonds: paper III's PC1+PC2 and focusing for "
               "the same model, where it reports one).")
    return Figure("Cross-model signatures", caption, fig)


# --------------------------------------------------------------------------------------------
# trajectories: a statistic against training step, one line per model (runs of one model at
# several checkpoints; the step comes from the revision, geomprobe.compare.identify)

TRAJECTORY_STATISTICS = (
    ("geometry", "pc1", "value manifold PC1"),
    ("geometry", "pc12", "value manifold PC1+PC2"),
    ("geometry", "keys_mean_abs_cos", "mean key |cos| over layers (lower: more orthogonal)"),
    ("geometry", "focusing", "attention focusing 1 - H(L-1)/H(0)"),
    ("domain", "pc12_gain[*]", "PC1+PC2 gain over the mixed set"),
    ("sula", "mae_bits", "SULA MAE |H_model - H_bayes| (bits)"),
    ("sula", "rho_pc1_H_bayes_given_k", "SULA rho(PC1, H_bayes) given k (controlled)"),
    ("sula", "rho_pc1_H_bayes", "SULA rho(PC1, H_bayes), raw (confounded with k)"),
    ("sula", "rho_k_pc1", "SULA rho(k, PC1) (the confound)"),
    ("ablation", "delta_mae_bits[headline]", "true-axis cut: change in the SULA MAE (bits)"),
    ("ablation", "axis_r_change[headline]", "true-axis cut: change of the axis-entropy rho after the edit"),
    ("mechanisms", "evidence_mass", "attention mass on the evidence, last layer"),
    ("mechanisms", "focusing", "attention focusing on the mechanisms rows"),
)


def step_text(step) -> str:
    """1 -> '1', 1000 -> '1k', 143000 -> '143k', 2500000 -> '2.5M'."""
    for scale, suffix in ((1e6, "M"), (1e3, "k")):
        if step >= scale:
            return f"{step / scale:g}{suffix}"
    return f"{step:g}"


def zero_position(steps: list[int]) -> float:
    """Where a log axis draws step 0: a decade below the smallest positive step (1 when there is none)."""
    positive = [s for s in steps if s > 0]
    return min(positive) / 10 if positive else 1.0


def step_axis(steps: list[int], zero_at: float | None = None) -> tuple[dict, float]:
    """A log x axis for training steps and where step 0 is drawn (zero_position), labelled '0'."""
    import math

    positive = sorted({s for s in steps if s > 0})
    zero_at = zero_position(steps) if zero_at is None else zero_at
    ticks = [zero_at] if any(s == 0 for s in steps) else []
    if positive and positive[-1] / positive[0] >= 100:  # two decades or more: one tick per decade
        low, high = math.floor(math.log10(positive[0])), math.ceil(math.log10(positive[-1]))
        ticks += [10.0 ** e for e in range(low, high + 1)]
    else:
        ticks += positive
    text = ["0" if t == zero_at and 0 in steps else step_text(t) for t in ticks]
    return dict(type="log", tickmode="array", tickvals=ticks, ticktext=text, title="training step (log; 0 at left)",
                showgrid=True), zero_at


def trajectory_figures(rows: list[dict]) -> list[Figure]:
    """One figure per headline statistic (TRAJECTORY_STATISTICS) against training step, for every
    model with runs at two or more steps: one line per model (the model spec without its revision),
    whiskers the 95% CIs as the suite computed them, grey the untrained copies' mean where the suite
    compared with them. rows: geomprobe.compare tidy rows (suite_rows / aggregate(...).rows)."""
    runs: dict[str, tuple] = {}
    for row in rows:
        runs.setdefault(row["run"], (row["model"], row["step"]))
    by_model: dict[str, dict[int, list[str]]] = {}
    for label, (model, step) in runs.items():
        if step is not None:
            by_model.setdefault(model, {}).setdefault(step, []).append(label)
    models = {model: steps for model, steps in by_model.items() if len(steps) >= 2}
    if not models:
        return []
    single = sorted(model for model, steps in by_model.items() if len(steps) < 2)
    index = {(row["run"], row["suite"], row["statistic"]): row for row in rows}
    headline = {row["run"]: row["text"] for row in rows
                if row["suite"] == "ablation" and row["statistic"] == "headline_condition"}
    specs = []
    for suite, statistic, title in TRAJECTORY_STATISTICS:
        if statistic.endswith("[*]"):
            prefix = statistic[:-2]
            found = sorted({row["statistic"] for row in rows if row["suite"] == suite
                            and row["statistic"].startswith(prefix)})
            specs += [(suite, name, f"{title}, {name[len(prefix):-1]}") for name in found]
        else:
            specs.append((suite, statistic, title))
    zero_at = zero_position([s for steps in models.values() for s in steps])
    colors = {model: PALETTE[i % len(PALETTE)] for i, model in enumerate(sorted(models))}
    figures = []
    for suite, statistic, title in specs:
        series = {}
        for model in sorted(models):
            points = []
            for step in sorted(models[model]):
                for label in models[model][step]:
                    name = (statistic.replace("[headline]", f"[{headline.get(label)}]") if "[headline]" in statistic
                            else statistic)
                    row = index.get((label, suite, name))
                    if row is not None and row["value"] is not None:
                        points.append((step, label, row))
            if points:
                series[model] = points
        if not any(len({step for step, _, _ in points}) >= 2 for points in series.values()):
            continue
        figures.append(_trajectory(suite, statistic, title, series, colors, zero_at, single))
    return figures


def _trajectory(suite: str, statistic: str, title: str, series: dict, colors: dict, zero_at: float,
                single: list[str]) -> Figure:
    fig = go.Figure()
    steps_drawn = sorted({step for points in series.values() for step, _, _ in points})
    shown_null = False
    for model, points in series.items():
        color = colors[model]
        x = [step if step > 0 else zero_at for step, _, _ in points]
        cis = [[row["ci_low"], row["ci_high"]] if row["ci_low"] is not None else None for _, _, row in points]
        custom = [[step, esc(label), "" if ci is None else f" [{ci[0]:.4g}, {ci[1]:.4g}]",
                   esc(row["status_vs_untrained"] or "")] for (step, label, row), ci in zip(points, cis)]
        fig.add_trace(go.Scatter(x=x, y=[row["value"] for _, _, row in points], mode="lines+markers", name=esc(model),
                                 legendgroup=esc(model), line=dict(color=color, width=2.5),
                                 marker=dict(size=9, color=color), customdata=custom,
                                 hovertemplate="%{customdata[1]}<br>step %{customdata[0]}: %{y:.4g}%{customdata[2]}"
                                               "<br>%{customdata[3]}<extra></extra>"))
        if any(ci is not None for ci in cis):
            fig.add_trace(ci_whiskers(x, cis, f"{esc(model)} 95% CI", color, showlegend=False,
                                      legendgroup=esc(model)))
        nulls = [(xi, row["untrained_null_mean"]) for xi, (_, _, row) in zip(x, points)
                 if row["untrained_null_mean"] is not None]
        if nulls:
            fig.add_trace(go.Scatter(x=[p[0] for p in nulls], y=[p[1] for p in nulls], mode="lines+markers",
                                     name="untrained copies (mean)", legendgroup="untrained", showlegend=not shown_null,
                                     line=dict(color=NULL_SHUFFLE, width=1.5, dash="dot"), marker=dict(size=5),
                                     hovertemplate=f"{esc(model)}, untrained copies: %{{y:.4g}}<extra></extra>"))
            shown_null = True
    axis, _ = step_axis(steps_drawn, zero_at)
    style(fig, 380, xaxis=axis, yaxis_title=esc(title))
    where = "; ".join(f"{model}: steps " + ", ".join(step_text(step) if step else "0" for step, _, _ in points)
                      for model, points in series.items())
    caption = (f"{title} ({suite} suite, statistic {statistic}) of each model against its training step (log axis; "
               f"step 0 drawn at {zero_at:g} and labelled 0), one line per model, whiskers the 95% CIs as the suite "
               f"computed them{', grey the mean of the untrained copies' if shown_null else ''}: look for when the "
               f"statistic leaves its untrained value and where it settles ({where}).")
    notes = ([f"models with a single checkpoint are not drawn: {', '.join(single)}"] if single else [])
    return Figure(f"Trajectory: {title}", caption, fig, notes)
