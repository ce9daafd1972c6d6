"""The report's figures: the machinery every family draws with, and the report's own families.

A family is one function, RunData -> list[Figure | Table], under a section heading. A family draws
what the results on disk say and nothing else: no statistic is computed here (statistics live in
geomprobe.analysis and the suites). A family whose inputs are absent returns []; the page says what
is missing.

A suite's figures live in its folder's figures.py (geomprobe/suites/<name>/figures.py), which calls
`register_figures("Section", ("suite",), name_figures)` when imported; geomprobe.suites.base.load_faces
imports those modules (run_figure_families), so nothing here imports a suite's figures by name. A
plug-in suite registers its families the same way, and names there its panels against untrained
copies (register_untrained) and its statistics against training step
(geomprobe.report.trajectories.register_trajectories). This module keeps what the report draws for
every run whatever its suites: the untrained-copies panels, the wind-tunnel figures and the table of
the suites no family draws (RUN_FIGURES). The side-by-side tables of --definitions paper-code are in
definitions.py, the trajectories in trajectories.py, the verdict cards in cards.py.

Captions are one sentence: what to look for, with the numbers read from the results and the
papers' reference values (METHODS.md sections 2-9), which are references, never results.
"""

from __future__ import annotations

import html
import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Callable

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from geomprobe.compare import paper_reference

from .rundata import RunData

esc = html.escape  # strings from files shown inside plots (plotly reads a few HTML tags)

MEASURED = "#1f5fa8"
SECOND = "#d9661f"
NULL_SHUFFLE = "#7f7f7f"
NULL_GAUSSIAN = "#b0b0b0"
BASELINES = {"analytic": "#2ca02c", "empirical": "#98df8a", "init": "#9467bd", "step0": "#e377c2"}
PALETTE = ["#1f5fa8", "#d9661f", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22"]

# Paper reference values (METHODS.md) that the machinery reads (the wind-tunnel figures); drawn or
# quoted as references only. A suite's own live in its figures.py.
REF_WINDTUNNEL = {
    "bijection": "paper I: entropy MAE 3e-3 bits (v1) / 0.007 (v3) for the transformer, about 1.85 for an MLP",
    "hmm": "paper I v3: entropy MAE 0.049 bits for the transformer, 0.024 Mamba, 0.411 LSTM, 0.40 MLP",
    "recall": "paper I v3: accuracy 100% transformer, 97.8% Mamba, 0.5% LSTM",
    "sula": "the SULA tunnel's optimum is the exact posterior (METHODS.md section 9)",
}


@dataclass
class Figure:
    title: str
    caption: str  # one sentence: what to look for, and the paper's reference value where there is one
    fig: go.Figure
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Cell:
    """A table cell with more than one string (all plain text; page.py escapes each): `detail`, a
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
    text or Cells (page.py escapes them); `reference` is an optional last row of paper values;
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
# every suite compared with untrained copies, and the suites no family draws


UNTRAINED_RULE = ("'better than untrained' needs the paired-bootstrap CI of model minus null to exclude 0 on the "
                  "favourable side and the model to lie outside where one more untrained copy would fall.")


@dataclass(frozen=True)
class UntrainedPanel:
    suite: str
    titles: Callable[[str], str | None]  # a comparison's name -> its panel's title (None: its statistic's name)
    rule: str  # the caption's last sentence: when the model counts as above its untrained copies


_UNTRAINED: list[UntrainedPanel] = []  # register_untrained: suites' figures faces and plug-ins


def register_untrained(suite: str, titles: Callable[[str], str | None] | None = None,
                       rule: str = UNTRAINED_RULE) -> None:
    """Draw `suite`'s comparisons with untrained copies (results["untrained_null"]["comparisons"]) in
    the report's "Against untrained copies" section, one panel each: titles(name), the panel's title
    (a dict's .get will do; None for the comparison's own statistic name); rule, the caption's last
    sentence."""
    _UNTRAINED.append(UntrainedPanel(suite, titles or (lambda name: None), rule))


def untrained_panels() -> list[UntrainedPanel]:
    """The registered panels, after each suite folder's figures face is loaded, in suite registry
    order (a suite that is not registered after them)."""
    from geomprobe.suites.base import SUITES, load_faces

    load_faces("figures")
    order = {name: rank for rank, name in enumerate(SUITES)}
    return sorted(_UNTRAINED, key=lambda panel: order.get(panel.suite, len(order)))


def _versus(cmp: dict) -> str:
    """The comparison in the one vocabulary: 'better than untrained', '..., lower is better'."""
    from geomprobe.analysis.null_comparison import status_words

    words = status_words(str(cmp.get("status", "")))
    return words + (", lower is better" if cmp.get("higher_is_better") is False else "")


def _untrained_panel(run: RunData, spec: UntrainedPanel) -> Figure | None:
    suite = spec.suite
    nulls = (run.results.get(suite) or {}).get("untrained_null")
    if not nulls:
        return None
    panels = [(name, cmp) for name, cmp in (nulls.get("comparisons") or {}).items()
              if cmp.get("status") not in ("not measured", "not tested")]
    if not panels:
        return None

    def title(name: str, cmp: dict) -> str:
        return spec.titles(name) or cmp.get("statistic") or name

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
                                 hovertemplate=f"model: %{{y:.3f}}<br>{esc(_versus(cmp))}<extra></extra>",
                                 showlegend=column == 1), row=1, col=column)
    verdicts = "; ".join(f"{title(n, c)}: {_versus(c)} (difference {with_ci(c.get('difference'), '+.3f')})"
                         for n, c in panels)
    return Figure(title=f"{suite}: against untrained copies of the same architecture", fig=style(fig, height=360),
                  caption=(f"Headline statistics of the {suite} suite for the model (diamond) and for each untrained "
                           f"null model ({esc(nulls.get('description'))}; grey), on the same inputs: look for the "
                           f"model standing clear of the grey points. {verdicts}. {spec.rule}"))


def untrained_figures(run: RunData) -> list[Figure | Table]:
    """Each suite's headline statistics for the model and each untrained null model (the suites
    registered with register_untrained)."""
    figures = [_untrained_panel(run, spec) for spec in untrained_panels()]
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


# The machinery's own families, drawn after every suite's (run_figure_families).
RUN_FIGURES: list[FigureFamily] = [
    # draws only the suites' untrained_null comparisons (register_untrained): not what marks a suite drawn
    FigureFamily("Against untrained copies", (), untrained_figures),
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
