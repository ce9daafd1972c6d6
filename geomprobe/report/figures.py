"""The report's figures: one function per figure family, each RunData -> list[Figure | Table].

A family draws what the results on disk say and nothing else: no statistic is computed here
(statistics live in geomprobe.analysis and the suites). A family whose inputs are absent
returns []; the page says what is missing.
To add a family, write `def name_figures(run) -> list[Figure | Table]` and
append `FigureFamily("Section", ("suite",), name_figures)` to RUN_FIGURES.

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

# Paper reference values (METHODS.md); drawn or quoted as references only.
REF_MANIFOLD = ("paper III: wind tunnels PC1 84-90%; mixed-domain PC1+PC2 Pythia-410M 99.7%, Phi-2 60.6%, "
                "Llama-3.2-1B 51.4%, Mistral-7B 15-20%")
REF_DOMAIN = "paper III, mathematics only: Pythia-410M 99.9%, Phi-2 63.5%, Llama-3.2-1B 73.6%, Mistral-7B ~80%"
REF_KEYS = ("paper III claims 0.034-0.18 for trained models; the official code's Pythia-410M run gives 0.0297, "
            "about the Gaussian value for D=1024")
REF_FOCUSING = ("paper III: wind tunnels 85-90%, Phi-2 86%, Pythia-410M 82%, Llama-3.2-1B 31%, Mistral-7B "
                "20-30% and non-monotone")
REF_WINDTUNNEL = {
    "bijection": "paper I: entropy MAE 3e-3 bits (v1) / 0.007 (v3) for the transformer, about 1.85 for an MLP",
    "hmm": "paper I v3: entropy MAE 0.049 bits for the transformer, 0.024 Mamba, 0.411 LSTM, 0.40 MLP",
    "recall": "paper I v3: accuracy 100% transformer, 97.8% Mamba, 0.5% LSTM",
    "sula": "the SULA tunnel's optimum is the exact posterior (METHODS.md section 9)",
}
REF_SULA_MAE = "paper III, LLMs: SULA MAE 0.31-0.44 bits (Phi-2 0.31, Llama-3.2-1B 0.36, Pythia-410M 0.44)"
REF_SULA_PC1 = ("paper III, LLMs: |rho(PC1, H_bayes)| 0.65-0.80; rho(k, PC1) 0.86 Pythia-410M, 0.60 Phi-2, "
                "0.32 Llama-3.2-1B")
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
# value manifold (METHODS.md section 2; domain restriction, section 6)


def _entropy_for(run: RunData, relative: str, n: int):
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


def _geometry_prompts(run: RunData, n: int) -> list[dict] | None:
    rows = run.jsonl("geometry/extraction/prompts.jsonl")
    return rows if rows and len(rows) == n else None


def _manifold_scatter(run: RunData, vm: dict) -> Figure | None:
    pc1, pc2 = vm.get("pc1_coords"), vm.get("pc2_coords")
    if not pc1 or not pc2:
        return None
    entropy = _entropy_for(run, "geometry/extraction/next_entropy_bits.npy", len(pc1))
    marker = dict(size=8, line=dict(width=0.5, color="white"))
    if entropy is not None:
        marker.update(color=entropy.tolist(), colorscale="Viridis", showscale=True,
                      colorbar=dict(title=dict(text="next-token<br>entropy (bits)")))
    else:
        marker.update(color=MEASURED)
    customdata, who = prompt_hover(_geometry_prompts(run, len(pc1)), len(pc1), run.compact)
    fig = go.Figure(go.Scatter(x=pc1, y=pc2, mode="markers", marker=marker, name="prompts", customdata=customdata,
                               hovertemplate=who + "PC1 %{x:.2f}<br>PC2 %{y:.2f}"
                                             + ("<br>entropy %{marker.color:.3f} bits" if entropy is not None else "")
                                             + "<extra></extra>"))
    style(fig, 460, xaxis_title=f"PC1 ({pct(vm.get('pc1'))} of variance)",
          yaxis_title=f"PC2 ({pct(_pc2_share(vm))} of variance)", showlegend=False)
    rho = vm.get("rho_pc1_entropy_raw")
    if entropy is None and rho is None:
        look = ("points are not coloured because this model has no next-token entropy (an encoder), so look only "
                "for how far the cloud stretches along PC1")
    elif entropy is None:
        look = (f"points are not coloured because geometry/extraction/next_entropy_bits.npy is missing; Spearman "
                f"rho(PC1, entropy) = {fmt(rho, '+.2f')} as computed")
    else:
        look = (f"look for colour (entropy) changing steadily along PC1, an entropy-ordered manifold: Spearman "
                f"rho(PC1, entropy) = {fmt(rho, '+.2f')} as computed, PC1 oriented so it is >= 0")
    ref = model_reference(run)
    ref_text = (f"paper III for this model: mixed PC1+PC2 {ref['pc12_mixed']}" if ref
                else REF_MANIFOLD)
    caption = (f"Last-layer (layer {vm.get('layer')}, {vm.get('readout', 'values')}) final-token vectors of "
               f"{vm.get('n_prompts', len(pc1))} prompts on their first two principal components: {look} "
               f"({ref_text}).")
    notes = [f"PC1 sign: {vm['pc1_sign']}"] if vm.get("pc1_sign") else []
    return Figure("Value manifold: PC1 vs PC2", caption, fig, notes)


def _pc1_entropy(run: RunData, vm: dict) -> Figure | None:
    """PC1 against each prompt's next-token entropy: the ordering the value-manifold rho scores."""
    pc1 = vm.get("pc1_coords")
    entropy = _entropy_for(run, "geometry/extraction/next_entropy_bits.npy", len(pc1 or []))
    if not pc1 or entropy is None:
        return None
    customdata, who = prompt_hover(_geometry_prompts(run, len(pc1)), len(pc1), run.compact)
    fig = go.Figure(go.Scatter(x=entropy.tolist(), y=pc1, mode="markers", name="prompts", customdata=customdata,
                               marker=dict(size=8, color=MEASURED, opacity=0.75, line=dict(width=0.5, color="white")),
                               hovertemplate=who + "entropy %{x:.3f} bits<br>PC1 %{y:.2f}<extra></extra>"))
    style(fig, 420, xaxis_title="next-token entropy (bits)", yaxis_title="PC1 coordinate", showlegend=False)
    caption = (f"Each prompt's last-layer PC1 coordinate against its next-token entropy ({len(pc1)} prompts): look "
               f"for the points rising or falling steadily with entropy; Spearman rho(PC1, entropy) = "
               f"{fmt(vm.get('rho_pc1_entropy_raw'), '+.2f')} as computed (paper III: |rho| 0.65-0.80).")
    return Figure("Value manifold: PC1 vs next-token entropy", caption, fig)


def _pc2_share(vm: dict):
    spectrum = vm.get("spectrum") or []
    return spectrum[1] if len(spectrum) > 1 else None


def _spectrum(vm: dict) -> Figure | None:
    spectrum = vm.get("spectrum")
    if not spectrum:
        return None
    components = list(range(1, len(spectrum) + 1))
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=components, y=spectrum, mode="lines+markers", name="measured",
                             line=dict(color=MEASURED, width=3)))
    # the Gaussian null drawn wide and pale under the shuffle null: the two often coincide
    for key, label, color, width, dash in (("gaussian_null", "Gaussian null (median)", "#d0d0d0", 7, "solid"),
                                           ("shuffle_null", "shuffle null (median)", NULL_SHUFFLE, 2, "dash")):
        median = (vm.get(key) or {}).get("spectrum_median")
        if median:
            fig.add_trace(go.Scatter(x=components[:len(median)], y=median, mode="lines", name=label,
                                     line=dict(color=color, dash=dash, width=width)))
    # percent ticks at 1-2-5 steps over a narrow range; powers of ten when tiny shares stretch the axis
    tiny = min((v for v in spectrum if v and v > 0), default=1.0) < 1e-3
    style(fig, 400, xaxis_title="principal component", yaxis_title="share of variance (log)",
          yaxis=log_axis(spectrum) if tiny else dict(type="log", dtick="D2", tickformat=".1~%"))
    shuffle = ((vm.get("shuffle_null") or {}).get("pc1") or {}).get("median")
    caption = (f"Eigenvalue spectrum (share of variance per component) of the last-layer vectors against the "
               f"computed nulls: look for the first components standing above the shuffle null, here PC1 "
               f"{pct(vm.get('pc1'))} vs {pct(shuffle)} for a shuffle of the same {vm.get('n_prompts')} x "
               f"{vm.get('n_columns')} matrix (the papers' 'about 5% for random' is only a rough figure).")
    return Figure("Value manifold: eigenvalue spectrum vs nulls", caption, fig)


def _untrained_models(run: RunData, suite: str) -> list[dict]:
    """The per-null-model entries of a suite's untrained_null (empty with --null off or none run)."""
    return ((run.results.get(suite) or {}).get("untrained_null") or {}).get("models") or []


def _per_layer(vm: dict, nulls: list[dict] = ()) -> Figure | None:
    rows = vm.get("per_layer") or []
    if not rows or all(r.get("pc1") is None for r in rows):
        return None
    layers = [r["layer"] for r in rows]
    fig = go.Figure()
    drawn = [null for null in nulls if [r.get("layer") for r in null.get("per_layer") or []] == layers]
    for i, null in enumerate(drawn):
        fig.add_trace(go.Scatter(x=layers, y=[r.get("pc1") for r in null["per_layer"]], mode="lines",
                                 name="PC1 of untrained copies", legendgroup="untrained", showlegend=i == 0,
                                 line=dict(color=NULL_SHUFFLE, width=1.5, dash="dot"),
                                 hovertemplate=f"{esc(null.get('name', ''))}: PC1 %{{y:.3f}}<extra></extra>"))
    for key, label, color in (("pc12", "PC1+PC2", SECOND), ("pc1", "PC1", MEASURED)):
        fig.add_trace(go.Scatter(x=layers, y=[r.get(key) for r in rows], mode="lines+markers", name=label,
                                 line=dict(color=color, width=3)))
        fig.add_trace(ci_whiskers(layers, [r.get(f"{key}_ci95") for r in rows], f"{label} 95% CI", color))
        nulls = [((r.get("shuffle_null") or {}).get(key) or {}).get("median") for r in rows]
        if any(v is not None for v in nulls):
            fig.add_trace(go.Scatter(x=layers, y=nulls, mode="lines", name=f"{label} shuffle null",
                                     line=dict(color=color, dash="dot", width=1.5)))
    style(fig, 420, xaxis_title="layer", yaxis_title="share of variance", xaxis_dtick=1)
    caption = (f"PC1 and PC1+PC2 of the final-token vectors at every layer, with bootstrap 95% CIs and shuffle "
               f"nulls: look for where the manifold becomes low-dimensional (last layer: PC1 {pct(vm.get('pc1'))}, "
               f"PC1+PC2 {pct(vm.get('pc12'))}; paper III: wind tunnels PC1 84-90%).")
    notes = [f"layer {r['layer']}: {r['note']}" for r in rows if r.get("pc1") is None and r.get("note")]
    if drawn:
        last = [null["per_layer"][-1].get("pc1") for null in drawn]
        notes.append(f"dotted grey: PC1 of {len(drawn)} untrained copies on the same prompts (last layer "
                     + ", ".join(pct(v) for v in last) + "): the share an untrained network of this shape gives")
    return Figure("Value manifold per layer", caption, fig, notes)


def _domain_scatter(run: RunData, domain: dict) -> Figure | None:
    sets = {label: entry for label, entry in (domain.get("sets") or {}).items()
            if entry.get("pc1_coords") and entry.get("pc2_coords")}
    if not sets:
        return None
    labels = list(sets)
    titles = [f"{label}: PC1+PC2 {pct(sets[label].get('pc12'))}" for label in labels]
    fig = make_subplots(rows=1, cols=len(labels), subplot_titles=[esc(t) for t in titles],
                        horizontal_spacing=0.05)
    coloured = False
    for column, label in enumerate(labels, start=1):
        entry = sets[label]
        entropy = _entropy_for(run, f"domain/extraction-{label}/next_entropy_bits.npy", len(entry["pc1_coords"]))
        marker = dict(size=6)
        if entropy is not None:
            marker.update(color=entropy.tolist(), coloraxis="coloraxis")
            coloured = True
        else:
            marker.update(color=PALETTE[(column - 1) % len(PALETTE)])
        fig.add_trace(go.Scatter(x=entry["pc1_coords"], y=entry["pc2_coords"], mode="markers", marker=marker,
                                 name=esc(label), hovertemplate=f"{esc(label)}<br>PC1 %{{x:.2f}}<br>PC2 %{{y:.2f}}"
                                                           "<extra></extra>"), row=1, col=column)
        fig.update_xaxes(title_text="PC1", row=1, col=column)
    fig.update_yaxes(title_text="PC2", row=1, col=1)
    style(fig, 400, titled=True, showlegend=False)
    if coloured:
        fig.update_layout(coloraxis=dict(colorscale="Viridis",
                                         colorbar=dict(title=dict(text="next-token<br>entropy (bits)"))))
    caption = (f"The mixed-domain set and each domain-restricted set, each with its own PCA of the last-layer "
               f"vectors: look for restricted sets collapsing onto fewer directions than the mixed set "
               f"({REF_DOMAIN}).")
    return Figure("Domain restriction: PC1 vs PC2 per prompt set", caption, fig)


def _domain_bars(run: RunData, domain: dict) -> Figure | None:
    sets = domain.get("sets") or {}
    if not sets:
        return None
    labels = list(sets)
    shown = [esc(label) for label in labels]
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=shown, y=[sets[k].get("pc12") for k in labels], mode="markers", name="PC1+PC2",
                             marker=dict(color=MEASURED, size=12),
                             customdata=[_gain_text(sets[k]) for k in labels],
                             hovertemplate="%{x}: %{y:.3f}%{customdata}<extra></extra>"))
    fig.add_trace(ci_whiskers(shown, [sets[k].get("pc12_ci95") for k in labels], "95% CI", MEASURED))
    fig.add_trace(go.Scatter(x=shown, y=[((sets[k].get("shuffle_null") or {}).get("pc12") or {}).get("median")
                                          for k in labels], mode="markers", name="shuffle null (median)",
                             marker=dict(color=NULL_SHUFFLE, symbol="line-ew-open", size=22, line=dict(width=2))))
    ref = model_reference(run)
    if ref:
        for key, label in (("pc12_mixed", "mixed"), ("pc12_math", "math")):
            span = paper_range(ref.get(key))
            if span and label in labels:
                fig.add_trace(go.Scatter(x=[label, label], y=list(span), mode="markers+lines",
                                         name=f"paper III {label}", line=dict(color="#c0392b"),
                                         marker=dict(symbol="diamond", size=10, color="#c0392b")))
    style(fig, 380, yaxis_title="PC1+PC2 share of variance", yaxis_rangemode="tozero")
    caption = (f"Last-layer PC1+PC2 of each prompt set with bootstrap 95% CIs (hover for the gain over mixed "
               f"and its CI): look for restricted sets above the mixed set by more than the intervals "
               f"({REF_DOMAIN}).")
    notes = [f"caveat: {domain['caveat']}"] if domain.get("caveat") else []
    return Figure("Domain restriction: PC1+PC2 per prompt set", caption, fig, notes)


def _gain_text(entry: dict) -> str:
    gain = entry.get("gain_over_mixed")
    if not gain:
        return ""
    pc12 = gain.get("pc12") or {}
    ci = pc12.get("ci95") or [None, None]
    return f"<br>gain over mixed {fmt(pc12.get('value'), '+.3f')} [{fmt(ci[0], '+.3f')}, {fmt(ci[1], '+.3f')}]"


def value_manifold_figures(run: RunData) -> list[Figure]:
    figures = []
    vm = (run.results.get("geometry") or {}).get("value_manifold")
    if vm:
        figures += [_manifold_scatter(run, vm), _pc1_entropy(run, vm), _spectrum(vm),
                    _per_layer(vm, _untrained_models(run, "geometry"))]
    domain = run.results.get("domain")
    if domain:
        figures += [_domain_scatter(run, domain), _domain_bars(run, domain)]
    return [f for f in figures if f is not None]


# --------------------------------------------------------------------------------------------
# key orthogonality (METHODS.md section 3)


def key_orthogonality_figures(run: RunData) -> list[Figure]:
    keys = (run.results.get("geometry") or {}).get("key_orthogonality")
    if not keys or not keys.get("layer_mean"):
        return []
    layer_mean = keys["layer_mean"]
    layers = list(range(len(layer_mean)))
    x0, x1 = layers[0], layers[-1]
    empirical, baselines = keys.get("empirical_gaussian") or {}, keys.get("baselines") or {}
    init, step0 = baselines.get("init") or {}, baselines.get("step0") or {}
    levels = {name: value for name, value in (
        ("analytic Gaussian", keys.get("analytic_gaussian")), ("empirical Gaussian", empirical.get("mean")),
        ("fresh init", init.get("mean")),
        ("step0", step0.get("mean") if len(step0.get("layer_mean") or []) != len(layers) else None))
        if isinstance(value, (int, float))}
    groups = coinciding(levels)
    together = [name for names in groups.values() for name in names]

    def named(label: str, key: str) -> str:
        return f"{label} (coincides)" if key in together else label

    fig = go.Figure()
    if keys.get("layer_p10") and keys.get("layer_p90"):
        fig.add_trace(go.Scatter(x=layers, y=keys["layer_p90"], mode="lines", line=dict(width=0), showlegend=False,
                                 hoverinfo="skip"))
        fig.add_trace(go.Scatter(x=layers, y=keys["layer_p10"], mode="lines", line=dict(width=0), fill="tonexty",
                                 fillcolor="rgba(31,95,168,0.18)", name="p10-p90 over heads", hoverinfo="skip"))
    fig.add_trace(go.Scatter(x=layers, y=layer_mean, mode="lines+markers", name="trained: mean over heads",
                             line=dict(color=MEASURED, width=3)))
    if keys.get("analytic_gaussian") is not None:
        fig.add_trace(hline_trace(x0, x1, keys["analytic_gaussian"], named("analytic Gaussian E|cos|",
                                                                            "analytic Gaussian"),
                                  BASELINES["analytic"], "solid", opacity=0.35, line_width=8))
    if empirical.get("mean") is not None:
        fig.add_trace(hline_trace(x0, x1, empirical["mean"], named("empirical Gaussian", "empirical Gaussian"),
                                  "#1b7a1b", "dot", line_width=3))
    if "init" in baselines:
        fig.add_trace(hline_trace(x0, x1, init["mean"], named(f"fresh init ({init.get('n_seeds', '?')} seeds, mean)",
                                                              "fresh init"), BASELINES["init"], "dashdot"))
    if "step0" in baselines:
        if len(step0.get("layer_mean") or []) == len(layers):
            fig.add_trace(go.Scatter(x=layers, y=step0["layer_mean"], mode="lines+markers", name="step0 checkpoint",
                                     line=dict(color=BASELINES["step0"], dash="dash", width=2)))
        else:
            fig.add_trace(hline_trace(x0, x1, step0["mean"], named("step0 checkpoint (mean)", "step0"),
                                      BASELINES["step0"]))
    nulls = ((run.results.get("geometry") or {}).get("untrained_null") or {}).get("models") or []
    for i, null in enumerate(m for m in nulls if len(m.get("key_layer_mean") or []) == len(layers)):
        fig.add_trace(go.Scatter(x=layers, y=null["key_layer_mean"], mode="lines", name="untrained copies (full depth)",
                                 line=dict(color=NULL_SHUFFLE, width=1.5, dash="dot"), legendgroup="untrained",
                                 showlegend=i == 0, hovertemplate=f"{esc(null.get('name', ''))}: %{{y:.3f}}"
                                                                  "<extra></extra>"))
    style(fig, 420, xaxis_title="layer", yaxis_title="mean |cos| between key columns", xaxis_dtick=1)
    threshold = keys.get("threshold")
    caption = (f"Mean absolute cosine between the {keys.get('n_vectors', 'd')} key columns of W_K per layer "
               f"(line: mean over heads, band: 10th-90th percentile) against the computed random and "
               f"initialisation baselines: look for how far trained keys sit from the baselines; "
               f"{pct(keys.get('fraction_below'))} of layers are below the verdict threshold {fmt(threshold, '.2f')} "
               f"({REF_KEYS}).")
    notes = [f"{name}: {text}" for name, text in (keys.get("notes") or {}).items()]
    notes[:0] = [f"{', '.join(names)} coincide at {text} to the precision shown: one line on the plot, told apart "
                 "by style (analytic wide pale solid, empirical dotted, fresh init dash-dot, step0 dashed)"
                 for text, names in groups.items()]
    if keys.get("init_note") and "init" in baselines:
        notes.append(f"init: {keys['init_note']}")
    if keys.get("ln_folded") or keys.get("fold_ln"):
        notes.append("W_K rows multiplied by the preceding norm's scale (fold_ln)")
    return [Figure("Key orthogonality per layer", caption, fig, notes)]


# --------------------------------------------------------------------------------------------
# attention focusing (METHODS.md section 4)


def attention_figures(run: RunData) -> list[Figure]:
    focus = (run.results.get("geometry") or {}).get("attention_focusing")
    extract = run.results.get("extract")
    if focus and focus.get("hbar_bits"):
        layers = list(range(len(focus["hbar_bits"])))
        bits, bits_ci = focus["hbar_bits"], focus.get("hbar_bits_ci95") or []
        normalised = focus.get("normalised") or {}
        norm, norm_ci = normalised.get("hbar") or [], normalised.get("hbar_ci95") or []
        source = f"geometry suite, {focus.get('n_prompts')} prompts"
    elif extract and extract.get("layers"):
        rows = extract["layers"]
        layers = [r["layer"] for r in rows]
        bits, bits_ci = [r.get("attn_entropy_bits") for r in rows], [r.get("ci95") for r in rows]
        norm, norm_ci = [r.get("attn_entropy_normalised") for r in rows], [r.get("normalised_ci95") for r in rows]
        source = f"extract suite, {extract.get('n_prompts')} prompts"
    else:
        return []
    titles = ["bits", "normalised by log2(visible keys)"]
    notes = []
    if focus and focus.get("focusing") is not None:
        ci = focus.get("focusing_ci95") or [None, None]
        titles[0] = f"bits: focusing 1 - H(L-1)/H(0) = {pct(focus['focusing'])} [{pct(ci[0])}, {pct(ci[1])}]"
        normalised = focus.get("normalised") or {}
        if normalised.get("focusing") is not None:
            titles[1] = f"normalised by log2(visible keys): focusing {pct(normalised['focusing'])}"
        notes.append(f"largest reduction from layer 0: {pct(focus.get('largest_reduction'))} at layer "
                     f"{focus.get('largest_reduction_layer')}; monotonicity (Spearman rho of layer vs entropy) "
                     f"{fmt(focus.get('monotonicity'), '+.2f')}")
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.1, subplot_titles=titles)
    for column, (values, cis) in enumerate(((bits, bits_ci), (norm, norm_ci)), start=1):
        if not values:
            continue
        fig.add_trace(go.Scatter(x=layers, y=values, mode="lines+markers", name="mean over heads",
                                 line=dict(color=MEASURED, width=3), showlegend=column == 1), row=1, col=column)
        fig.add_trace(ci_whiskers(layers, cis, "95% CI (bootstrap over prompts)", MEASURED,
                                  showlegend=column == 1), row=1, col=column)
        fig.update_xaxes(title_text="layer", dtick=1, row=1, col=column)
    nulls = ((run.results.get("geometry") or {}).get("untrained_null") or {}).get("models") or []
    drawn_nulls = [m for m in nulls if m.get("hbar_bits") and len(m["hbar_bits"]) == len(layers)]
    for i, null in enumerate(drawn_nulls):
        fig.add_trace(go.Scatter(x=layers, y=null["hbar_bits"], mode="lines", name="untrained copies",
                                 line=dict(color=NULL_SHUFFLE, width=1.5, dash="dot"), legendgroup="untrained",
                                 showlegend=i == 0, hovertemplate=f"{esc(null.get('name', ''))}: %{{y:.3f}} bits"
                                                                  "<extra></extra>"), row=1, col=1)
    if drawn_nulls:
        notes.append(f"dotted grey: the same entropy profile of {len(drawn_nulls)} untrained copies on the same prompts")
    fig.update_yaxes(title_text="final-token attention entropy (bits)", row=1, col=1)
    fig.update_yaxes(title_text="entropy / log2(visible keys)", row=1, col=2)
    style(fig, 440, titled=True)
    if focus and focus.get("focusing") is not None:
        measured = f"here {pct(focus['focusing'])}"
    else:
        measured = "the focusing ratio is computed by the geometry suite, not run here"
    caption = (f"Mean over query heads of the final token's attention entropy per layer ({source}), with bootstrap "
               f"95% CIs: look for entropy falling from the first to the last layer, {measured} ({REF_FOCUSING}).")
    return [item for item in (Figure("Attention focusing per layer", caption, fig, notes), _head_entropy(run, focus))
            if item is not None]


def _head_entropy(run: RunData, focus: dict | None) -> Figure | None:
    """Layer x head heatmap of the final token's attention entropy: the geometry suite's
    attention_focusing.head_bits [n_layers][n_heads] (bits, mean over prompts), the per-head detail
    under the focusing profile, whose per-layer means are these rows' means. Runs written before
    head_bits existed have none: not drawn."""
    import numpy as np

    if focus is None or not focus.get("head_bits"):
        if focus is not None:
            run.notes.append("layer x head attention entropy: attention_focusing.head_bits is not in this run's "
                             "geometry results (written by an older geomprobe): rerun the geometry suite with "
                             "--overwrite to draw it")
        return None
    per_head = np.array(focus["head_bits"], dtype=float)  # [n_layers, n_heads]
    layers, heads = list(range(per_head.shape[0])), list(range(per_head.shape[1]))
    fig = go.Figure(go.Heatmap(z=[[None if not np.isfinite(v) else float(v) for v in row] for row in per_head],
                               x=heads, y=layers, colorscale="Viridis", colorbar=dict(title=dict(text="bits")),
                               hovertemplate="layer %{y}, head %{x}: %{z:.3f} bits<extra></extra>"))
    style(fig, max(260, 60 + 34 * len(layers)), xaxis_title="head", yaxis_title="layer", xaxis_dtick=1,
          yaxis_dtick=1)
    low = np.unravel_index(np.nanargmin(per_head), per_head.shape) if np.isfinite(per_head).any() else None
    where = "" if low is None else (f"; the most focused head is layer {low[0]} head {low[1]} at "
                                    f"{per_head[low]:.2f} bits")
    caption = (f"Mean over {focus.get('n_prompts')} prompts of the final token's attention entropy per layer and query head "
               f"(bits; the focusing profile is each row's mean): look for heads that focus (dark) while others in "
               f"the same layer stay diffuse{where}.")
    return Figure("Attention entropy per layer and head", caption, fig)


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


def _dissociation(curves: list) -> Figure | None:
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
    figures.append(_dissociation(run.curves))
    return [f for f in figures if f is not None]


# --------------------------------------------------------------------------------------------
# SULA: in-context Bayesian updating against the exact posterior (METHODS.md section 7)


COMPACT_POINTS = 250  # per-prompt points a run's scatter keeps in a report of several runs


def _k_colors(n: int) -> list[str]:
    from plotly.colors import sample_colorscale

    return sample_colorscale("Viridis", [0.85 * i / max(1, n - 1) for i in range(n)])  # no pale yellow end


def _k_numeric(ks: list) -> bool:
    return bool(ks) and all(isinstance(k, (int, float)) and not isinstance(k, bool) for k in ks)


def k_positions(ks: list) -> list:
    """Where each k sits on the x axis: k itself (0, 1, 2, 4, 8 at their numeric distances), or
    evenly spaced positions when some k is not a number."""
    return list(ks) if _k_numeric(ks) else list(range(len(ks)))


def _k_gap(ks: list) -> float:
    """The smallest distance between neighbouring k positions (1 for a single k)."""
    x = sorted(k_positions(ks))
    return min((b - a for a, b in zip(x, x[1:]) if b > a), default=1)


def _k_axis(ks: list) -> dict:
    """k on its numeric axis, ticks at the k values measured."""
    x, gap = k_positions(ks), _k_gap(ks)
    return dict(tickmode="array", tickvals=x, ticktext=[str(k) for k in ks],
                range=[min(x) - 0.5 * gap, max(x) + 0.5 * gap])


def _sula_per_k(sula: dict) -> Figure | None:
    nulls = (sula.get("untrained_null") or {}).get("models") or []
    main = (sula.get("conditions") or {}).get("main") or {}
    per_k = main.get("per_k") or []
    if not per_k:
        return None
    ks = [row.get("k") for row in per_k]
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.1,
                        subplot_titles=("entropy over the two labels", "MAE |H_model - H_bayes| per k"))
    x = k_positions(ks)
    # the same x for both (an offset would read as a difference): Bayes as wide open diamonds under the model's dots
    for key, label, color, line, marker in (
            ("H_bayes", "H_bayes (exact posterior)", SECOND, dict(dash="dash", width=2),
             dict(size=15, symbol="diamond-open", line=dict(width=2.5))),
            ("H_model", "H_model (the model)", MEASURED, dict(width=1.5), dict(size=8, symbol="circle"))):
        fig.add_trace(go.Scatter(x=x, y=[estimate(row.get(key)) for row in per_k], mode="lines+markers", name=label,
                                 line=dict(color=color, **line), marker=dict(color=color, **marker),
                                 customdata=[[row.get("k"), row.get("n")] for row in per_k],
                                 hovertemplate=f"{key}, k = %{{customdata[0]}} (n %{{customdata[1]}}): "
                                               "%{y:.4f} bits<extra></extra>"), row=1, col=1)
        fig.add_trace(ci_whiskers(x, [interval(row.get(key)) for row in per_k], f"{key} 95% CI", color),
                      row=1, col=1)
    drawn = [null for null in nulls if [row.get("k") for row in null.get("per_k") or []] == ks]
    for i, null in enumerate(drawn):
        for column, key in ((1, "H_model"), (2, "mae_bits")):
            fig.add_trace(go.Scatter(x=x, y=[row.get(key) for row in null["per_k"]], mode="lines+markers",
                                     name="untrained copies", legendgroup="untrained", showlegend=i == 0 and column == 1,
                                     line=dict(color=NULL_SHUFFLE, width=1.5, dash="dot"), marker=dict(size=5),
                                     hovertemplate=f"{esc(null.get('name', ''))}: %{{y:.4f}} bits<extra></extra>"),
                          row=1, col=column)
    mae = [estimate(row.get("mae_bits")) for row in per_k]
    fig.add_trace(go.Scatter(x=x, y=mae, mode="lines+markers", name="MAE", showlegend=False,
                             line=dict(color="#8c564b", width=2), marker=dict(size=9),
                             hovertemplate="MAE: %{y:.3g} bits<extra></extra>"), row=1, col=2)
    fig.add_trace(ci_whiskers(x, [interval(row.get("mae_bits")) for row in per_k],
                              "MAE 95% CI", "#8c564b", showlegend=False), row=1, col=2)
    for column in (1, 2):
        fig.update_xaxes(title_text="k (in-context examples)", **_k_axis(ks), row=1, col=column)
    fig.update_yaxes(title_text="bits", rangemode="tozero", row=1, col=1)
    positive = [v for v in mae + [row.get("mae_bits") for null in drawn for row in null["per_k"]]
                if v is not None and v > 0]
    if positive and max(positive) / min(positive) > 10:
        fig.update_yaxes(title_text="bits (log)", **log_axis(positive), row=1, col=2)
    else:
        fig.update_yaxes(title_text="bits", rangemode="tozero", row=1, col=2)
    style(fig, 420, titled=True)
    caption = (f"Mean H_model (the model's entropy over the two labels, renormalised) and the exact Bayes entropy "
               f"H_bayes per number of in-context examples k in the main condition ({main.get('n_prompts')} "
               f"prompts), with bootstrap 95% CIs: look for the model's dots inside the Bayes diamonds at every k, "
               f"here MAE {with_ci(main.get('mae_bits'), '.3g')} bits over all k ({REF_SULA_MAE}).")
    if drawn:
        caption += (f" Dotted grey: {len(drawn)} untrained copies of the same architecture on the same prompts (MAE "
                    + ", ".join(fmt(null.get("mae_bits"), ".3g") for null in drawn) + " bits).")
    return Figure("SULA: H_model and H_bayes per k", caption, fig)


def _sula_scatter(run: RunData, sula: dict) -> Figure | None:
    main = (sula.get("conditions") or {}).get("main") or {}
    rows = run.jsonl("sula/prompts-main.jsonl")
    rows = [r for r in rows or [] if isinstance(r.get("H_model"), (int, float))
            and isinstance(r.get("H_bayes"), (int, float))]
    if not rows:
        run.notes.append("SULA H_model vs H_bayes per prompt: no usable sula/prompts-main.jsonl (the per-prompt "
                         "outputs the sula suite writes)")
        return None
    ks = sorted({r.get("k") for r in rows}, key=lambda k: (k is None, k))
    n_all, notes = len(rows), []
    if run.compact and n_all > COMPACT_POINTS:  # a report of several runs: every j-th prompt, no prompt ids
        stride = -(-n_all // COMPACT_POINTS)
        rows = rows[::stride]
        notes.append(f"{len(rows)} of the {n_all} prompts drawn (every {stride}th), to keep a report of several runs "
                     "small; a report of this run alone draws all of them")
    fig = go.Figure(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", name="y = x (Bayes-optimal)", hoverinfo="skip",
                               line=dict(color="#444", dash="dash", width=1.5)))
    for k, color in zip(ks, _k_colors(len(ks))):
        group = [r for r in rows if r.get("k") == k]
        ids = {} if run.compact else dict(customdata=[esc(str(r.get("id", ""))) for r in group])
        fig.add_trace(go.Scatter(x=[r["H_bayes"] for r in group], y=[r["H_model"] for r in group], mode="markers",
                                 name=f"k = {k}", marker=dict(color=color, size=7, opacity=0.65,
                                                              line=dict(width=0.5, color="white")), **ids,
                                 hovertemplate=f"k = {k}{'' if run.compact else ', %{customdata}'}<br>H_bayes "
                                               "%{x:.4f}<br>H_model %{y:.4f}<extra></extra>"))
    style(fig, 480, xaxis_title="H_bayes, exact posterior (bits)", yaxis_title="H_model (bits)",
          xaxis_range=[-0.03, 1.03], yaxis_range=[-0.03, 1.03])
    caption = (f"Each main-condition prompt's H_model against its exact H_bayes ({n_all} prompts, coloured by "
               f"k): look for the points on the dashed y = x line; as computed, Pearson "
               f"{with_ci(main.get('pearson_H_model_H_bayes'), '.4f')}, Spearman "
               f"{with_ci(main.get('spearman_H_model_H_bayes'), '.4f')}, "
               f"MAE {with_ci(main.get('mae_bits'), '.3g')} bits "
               f"({REF_SULA_MAE}).")
    return Figure("SULA: H_model vs H_bayes per prompt", caption, fig, notes)


def _sula_pc1(sula: dict) -> Figure | None:
    conditions = {name: entry for name, entry in (sula.get("conditions") or {}).items()
                  if isinstance(entry, dict) and entry.get("per_k")}
    if not conditions:
        return None
    ks = [row.get("k") for row in (conditions.get("main") or next(iter(conditions.values())))["per_k"]]
    spread = 0.4 * _k_gap(ks) if len(conditions) > 1 else 0.0  # conditions side by side at each k
    positions = k_positions(ks)
    fig = go.Figure()
    for index, (name, entry) in enumerate(conditions.items()):
        color = PALETTE[index % len(PALETTE)]
        offset = -spread / 2 + spread * index / max(1, len(conditions) - 1)
        per_k = [row for row in entry["per_k"] if row.get("k") in ks]
        x = [positions[ks.index(row["k"])] + offset for row in per_k]
        label = esc(name) + ("" if name == "main" else " (main basis)")
        fig.add_trace(go.Scatter(x=x, y=[estimate(row.get("pc1")) for row in per_k], mode="lines+markers",
                                 name=label, legendgroup=name,
                                 line=dict(color=color, width=3 if name == "main" else 1.5),
                                 marker=dict(size=9 if name == "main" else 7, color=color),
                                 customdata=[row.get("k") for row in per_k],
                                 hovertemplate=f"{esc(name)}, k = %{{customdata}}: mean PC1 %{{y:.3f}}<extra></extra>"))
        fig.add_trace(ci_whiskers(x, [interval(row.get("pc1")) for row in per_k], f"{label} 95% CI", color,
                                  showlegend=False, legendgroup=name))
    style(fig, 440, xaxis_title="k (in-context examples)", yaxis_title="mean PC1 coordinate (main basis)",
          xaxis=_k_axis(ks))
    axis, main = sula.get("axis") or {}, (sula.get("conditions") or {}).get("main") or {}
    caption = (f"Mean coordinate on the main condition's PC1 (layer {axis.get('layer')} {axis.get('readout', '')}, "
               f"{pct(axis.get('pc1_explained'))} of variance) per k for the main condition and each control "
               f"projected into the same basis, with bootstrap 95% CIs: look for the main condition moving steadily "
               f"with k and the no-evidence controls departing from it; main rho(PC1, H_bayes) given k "
               f"{with_ci(main.get('rho_pc1_H_bayes_given_k'), '+.2f')} (the controlled figure), raw over all k "
               f"{with_ci(main.get('rho_pc1_H_bayes'), '+.2f')} (confounded with k), rho(k, PC1) "
               f"{with_ci(main.get('rho_k_pc1'), '+.2f')} (the confound) ({REF_SULA_PC1}, raw).")
    notes = [f"PC1 sign: {axis['sign']}"] if axis.get("sign") else []
    profile = [row for row in sula.get("per_layer") or [] if row.get("rho_pc1_H_bayes") is not None]
    if profile:
        notes.append("rho(PC1, H_bayes) of each layer's own PC1 (main condition): " + ", ".join(
            f"layer {row['layer']} {row['rho_pc1_H_bayes']:+.2f} (PC1 {pct(row.get('pc1_explained'))})"
            for row in profile))
    notes += [f"{name} skipped: {why}" for name, why in ((sula.get("settings") or {}).get("skipped_controls")
                                                          or {}).items()]
    return Figure("SULA: mean PC1 per k, main condition and controls", caption, fig, notes)


def _sula_pc1_scatter(run: RunData, sula: dict) -> Figure | None:
    """Each main-condition prompt's PC1 against its H_bayes, one colour per k (the confound made visible)."""
    rows = [r for r in run.jsonl("sula/prompts-main.jsonl") or [] if isinstance(r.get("pc1"), (int, float))
            and isinstance(r.get("H_bayes"), (int, float))]
    if not rows:
        return None
    n_all, notes = len(rows), []
    if run.compact and n_all > COMPACT_POINTS:
        stride = -(-n_all // COMPACT_POINTS)
        rows = rows[::stride]
        notes.append(f"{len(rows)} of the {n_all} prompts drawn (every {stride}th), to keep a report of several runs "
                     "small")
    ks = sorted({r.get("k") for r in rows}, key=lambda k: (k is None, k))
    fig = go.Figure()
    for k, color in zip(ks, _k_colors(len(ks))):
        group = [r for r in rows if r.get("k") == k]
        customdata, who = prompt_hover(group, len(group), run.compact)
        fig.add_trace(go.Scatter(x=[r["H_bayes"] for r in group], y=[r["pc1"] for r in group], mode="markers",
                                 name=f"k = {k}", customdata=customdata,
                                 marker=dict(color=color, size=7, opacity=0.65, line=dict(width=0.5, color="white")),
                                 hovertemplate=who + "H_bayes %{x:.4f} bits<br>PC1 %{y:.3f}<extra></extra>"))
    style(fig, 460, xaxis_title="H_bayes, exact posterior (bits)", yaxis_title="PC1 coordinate (main basis)",
          legend_title_text="k")
    main = (sula.get("conditions") or {}).get("main") or {}
    caption = (f"Each main-condition prompt's PC1 coordinate against its exact H_bayes ({n_all} prompts, coloured by "
               f"k): look for PC1 ordered by H_bayes within each colour, not only between colours (k alone lowers "
               f"H_bayes); rho(PC1, H_bayes) given k {with_ci(main.get('rho_pc1_H_bayes_given_k'), '+.2f')}, raw "
               f"{with_ci(main.get('rho_pc1_H_bayes'), '+.2f')} ({REF_SULA_PC1}, raw).")
    return Figure("SULA: PC1 vs H_bayes per prompt, by k", caption, fig, notes)


def _sula_table(sula: dict) -> Table | None:
    conditions = {name: entry for name, entry in (sula.get("conditions") or {}).items() if isinstance(entry, dict)}
    if not conditions:
        return None
    header = ["condition", "labels", "Bayes", "prompts", "H_bayes (bits)", "H_model (bits)", "MAE (bits) [95% CI]",
              "k-only MAE (held-out half)", "Pearson(H_model, H_bayes)", "rho(PC1, H_bayes) given k",
              "rho(PC1, H_bayes), raw (confounded with k)", "rho(k, PC1) (the confound)"]
    rows = [[name, "/".join(map(str, entry.get("labels") or [])) or "-", str(entry.get("bayes", "-")),
             str(entry.get("n_prompts", "-")), fmt(estimate(entry.get("H_bayes"))),
             fmt(estimate(entry.get("H_model"))), with_ci(entry.get("mae_bits"), ".3g"),
             fmt(estimate((entry.get("mae_baselines") or {}).get("k_only")), ".3g"),
             with_ci(entry.get("pearson_H_model_H_bayes"), ".4f"),
             with_ci(entry.get("rho_pc1_H_bayes_given_k"), "+.2f"), with_ci(entry.get("rho_pc1_H_bayes"), "+.2f"),
             with_ci(entry.get("rho_k_pc1"), "+.2f")] for name, entry in conditions.items()]
    reference = ["paper III (LLMs, reference)", "", "", "", "", "", "0.31-0.44 (Phi-2, Llama-3.2-1B, Pythia-410M)",
                 "", "", "not reported", "|rho| 0.65-0.80", "0.86 Pythia-410M, 0.60 Phi-2, 0.32 Llama-3.2-1B"]
    caption = ("Every condition's scores as computed by the sula suite (Spearman rho; PC1 of the controls in the "
               "main condition's basis): look for the main condition and the controls with Bayes unchanged "
               "(lexical_remap, carrier_mask) scoring alike, and for the no-evidence controls (shuffled, label_mask: "
               "H_bayes = 1, so no correlation with it) showing whether the model still reads the evidence. "
               "H_bayes falls with k, so the raw rho(PC1, H_bayes) also scores an axis that only counts examples: "
               "the rho given k (Spearman partial correlation, one indicator per k) is the controlled figure, and "
               "a model MAE is worth reading only against the k-only baseline beside it; the last row is paper "
               "III's, a reference, never a result.")
    notes = []
    main = conditions.get("main") or {}
    within = main.get("rho_pc1_H_bayes_within_k")
    if isinstance(within, dict) and within.get("value") is not None:
        pvalue = within.get("pvalue")
        notes.append(f"main, within-k Spearman rho(PC1, H_bayes): pooled {with_ci(within, '+.2f')}"
                     + ("" if pvalue is None else f" (PC1 shuffled within k: p = {pvalue:.3g})") + "; per k "
                     + ", ".join(f"k = {row.get('k')} {fmt(estimate(row.get('rho_pc1_H_bayes')), '+.2f')}"
                                 for row in main.get("per_k") or []))
    if "rho_pc1_H_bayes_given_n_tokens" in main:
        notes.append(f"main, rho(PC1, H_bayes) given the prompt length in tokens "
                     f"{with_ci(main.get('rho_pc1_H_bayes_given_n_tokens'), '+.2f')}, given k and the length "
                     f"{with_ci(main.get('rho_pc1_H_bayes_given_k_n_tokens'), '+.2f')}; rho(length, PC1) "
                     f"{with_ci(main.get('rho_n_tokens_pc1'), '+.2f')}")
    return Table("SULA: scores per condition", caption, header, rows, reference, notes)


BASELINE_LABELS = (("model", "the model: |H_model - H_bayes|"), ("k_only", "k only: mean H_bayes per k"),
                   ("k_only_median", "k only: median H_bayes per k (the MAE-optimal function of k)"),
                   ("constant", "constant: mean H_bayes"), ("zero", "H = 0 for every prompt"),
                   ("model_minus_k_only", "model minus k only (paired difference)"))


def _sula_baselines(sula: dict) -> Table | None:
    main = (sula.get("conditions") or {}).get("main") or {}
    baselines = main.get("mae_baselines")
    if not isinstance(baselines, dict):
        return None
    split = baselines.get("split") or {}
    rows = [[label, with_ci(baselines.get(key), ".3g")] for key, label in BASELINE_LABELS if key in baselines]
    reference = ["paper III (LLMs, reference): model MAE", "0.31-0.44 (Llama-3.2-1B 0.36)"]
    caption = (f"MAE against H_bayes of predictors that read no evidence, beside the model's, on the same held-out "
               f"half of the main prompts ({split.get('n_score')} scored; the baselines fitted on the other "
               f"{split.get('n_fit')}, split within each k, seed {split.get('seed')}), with bootstrap 95% CIs: look "
               f"for the model below the k-only rows, since a model that only counts its examples scores the "
               f"k-only MAE and the constant H = 0 already scores about paper III's Llama figure.")
    return Table("SULA: the model against trivial MAE baselines", caption, ["predictor", "MAE (bits) [95% CI]"],
                 rows, reference)


def sula_figures(run: RunData) -> list[Figure | Table]:
    sula = run.results.get("sula")
    if not sula:
        return []
    items = [_sula_per_k(sula), _sula_scatter(run, sula), _sula_pc1(sula), _sula_pc1_scatter(run, sula),
             _sula_table(sula), _sula_baselines(sula),
             paper_code_table(sula, "sula", "SULA")]
    return [item for item in items if item is not None]


# --------------------------------------------------------------------------------------------
# entropy-axis interventions against random axes (METHODS.md section 8)


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


def ablation_summary(ablation: dict) -> dict | None:
    """The headline condition: the true cut on the largest layer set (paper III's multi-layer
    cut), else the first condition (geomprobe.compare.ablation_headline, which the tables use too)."""
    return ablation_headline(ablation)


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
    shown = set()
    pending = []  # (trace, row, column): added in one call, much faster than one add_trace each

    def add(trace, row, col):
        pending.append((trace, row, col))

    def legend(key):
        first = key not in shown
        shown.add(key)
        return first

    for condition in conditions:
        column = ops.index(str(condition.get("id", "?")).split("/")[0]) + 1
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
                add(go.Box(x=[label] * len(random_values), y=random_values, boxpoints="all", jitter=0.5,
                                     pointpos=0, name=f"random axes ({n_random} per condition)", legendgroup="random",
                                     showlegend=legend("random"), marker=dict(color=NULL_SHUFFLE, size=4),
                                     line=dict(color="#9a9a9a", width=1), fillcolor="rgba(127,127,127,0.15)",
                                     hovertemplate=f"random axis: {what} %{{y:{spec}}} {unit}<extra></extra>"),
                              row=row, col=column)
            if row == 2 and layer_entry.get("before") is not None:
                add(go.Scatter(x=[label], y=[layer_entry["before"]], mode="markers",
                                         name="unperturbed rho", legendgroup="base", showlegend=legend("base"),
                                         marker=dict(symbol="line-ew-open", size=40, color=MEASURED,
                                                     line=dict(width=3)),
                                         hovertemplate=f"unperturbed: rho at L{first} %{{y:+.3f}}<extra></extra>"),
                              row=row, col=column)
            value = estimate(true_entry)
            if value is None:
                continue
            if interval(true_entry):
                add(ci_whiskers([label], [interval(true_entry)], "true axis 95% CI", "#c0392b",
                                          showlegend=legend("ci"), legendgroup="ci"), row=row, col=column)
            ranked = "|change| " if row == 2 else ""
            rank = (f"{ranked}rank {where.get('rank')}/{where.get('of')}, p {fmt(where.get('p_value'), '.3f')}"
                    if where.get("rank") is not None else "no random axes")
            add(go.Scatter(x=[label], y=[value], mode="markers", name="true entropy axis",
                                     legendgroup="true", showlegend=legend("true"),
                                     marker=dict(symbol="diamond", size=14, color="#c0392b",
                                                 line=dict(width=1, color="white")),
                                     hovertemplate=f"{esc(str(condition.get('id')))}, true axis: {what} "
                                                   f"%{{y:{spec}}} {unit}<br>{rank}<extra></extra>"),
                          row=row, col=column)
    fig.add_traces([t for t, _, _ in pending], rows=[r for _, r, _ in pending], cols=[c for _, _, c in pending])
    for column in range(1, n_ops + 1):
        fig.add_hline(y=0, line=dict(color="#888", width=1, dash="dot"), row=1, col=column)
        fig.add_hline(y=0, line=dict(color="#888", width=1, dash="dot"), row=2, col=column)
        if column > 1:  # one rho scale across the operations
            fig.update_yaxes(matches=f"y{n_ops + 1}", row=2, col=column)
    fig.update_yaxes(tickformat="~g", row=1)  # plain decimals: no SI 'µ' for changes of a few 1e-4 bits
    fig.update_yaxes(title_text="change in SULA MAE (bits)", row=1, col=1)
    fig.update_yaxes(title_text="axis-entropy rho, first layer after the edit", row=2, col=1)
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
    notes = [f"{c.get('id')} (layers {', '.join(map(str, c.get('layers') or []))}): {c.get('reading')}"
             for c in conditions if c.get("reading")]
    thresholds = ablation.get("thresholds") or {}
    if thresholds:
        notes.append(f"readings: downstream |rho| < {thresholds.get('axis_r_zero')} counts as no correlation, a rho "
                     f"change of at least {thresholds.get('axis_r_change')} as a change; |change in MAE| < "
                     f"{thresholds.get('mae_bits')} bits and |change in Pearson| < {thresholds.get('pearson')} as "
                     f"behaviour unchanged; {thresholds.get('vs_random', '')}")
    return Figure("Entropy-axis interventions: true axis vs random axes", caption, fig, notes)


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


# --------------------------------------------------------------------------------------------
# mechanisms (papers I and II): Q-K alignment, the layer-0 frame, ablations, two timescales

REF_QK = "paper I: Q-K alignment diffuse at layer 0 and concentrated on the evidence by the last layer"
REF_FRAME = "paper I v3: 0.052 trained vs 0.082 random (mean |cos|)"
REF_TWO_TIMESCALES = "paper II: the attention frame settles early in training while the values keep refining"


def _qk_alignment(mech: dict) -> Figure | None:
    qk = mech.get("qk_alignment") or {}
    metrics = qk.get("metrics") or {}
    if not metrics.get("attn_entropy_bits"):
        return None
    layers = qk.get("layers") or list(range(len(metrics["attn_entropy_bits"]["value"])))
    evidence = "evidence_mass" in metrics
    titles = ["attention entropy (bits)"] + (["attention mass on the evidence"] if evidence else []) + \
        ["cos(query, key), post-rotary"]
    fig = make_subplots(rows=1, cols=len(titles), horizontal_spacing=0.08, subplot_titles=titles)
    shown = set()

    def first(key):
        new = key not in shown
        shown.add(key)
        return new

    def per_layer(column, name, color, label):
        entry = metrics[name]
        per_head = entry.get("per_head") or []
        n_heads = max((len(row) for row in per_head), default=0)
        xs = [layer for layer, row in zip(layers, per_head) for _ in row]
        ys = [value for row in per_head for value in row]
        if n_heads > 1:
            fig.add_trace(go.Scatter(x=xs, y=ys, mode="markers", name="single heads", legendgroup="heads",
                                     showlegend=first("heads"), marker=dict(color=color, size=6, opacity=0.35),
                                     hovertemplate=f"{label}, one head: %{{y:.3f}}<extra></extra>"), row=1, col=column)
        fig.add_trace(go.Scatter(x=layers, y=entry["value"], mode="lines+markers", name=label,
                                 line=dict(color=color, width=3)), row=1, col=column)
        fig.add_trace(ci_whiskers(layers, entry.get("ci95") or [], "95% CI (bootstrap over sequences)", color,
                                  showlegend=first("ci"), legendgroup="ci"), row=1, col=column)

    per_layer(1, "attn_entropy_bits", MEASURED, "head mean")
    nulls = (mech.get("untrained_null") or {}).get("models") or []
    for column, key in ((1, "hbar_bits"), (2, "evidence_mass_by_layer")):
        if column == 2 and not evidence:
            continue
        for null in (n for n in nulls if len(n.get(key) or []) == len(layers)):
            fig.add_trace(go.Scatter(x=layers, y=null[key], mode="lines", name="untrained copies",
                                     legendgroup="untrained", showlegend=first("untrained"),
                                     line=dict(color=NULL_SHUFFLE, width=1.5, dash="dot"),
                                     hovertemplate=f"{esc(null.get('name', ''))}: %{{y:.3f}}<extra></extra>"),
                          row=1, col=column)
    column = 2
    if evidence:
        per_layer(2, "evidence_mass", SECOND, "evidence mass (head mean)")
        share = qk.get("evidence_uniform_share")
        if share is not None:
            fig.add_trace(hline_trace(layers[0], layers[-1], share, "uniform attention's evidence share",
                                      NULL_SHUFFLE, "dash"), row=1, col=2)
        column = 3
    for name, label, color in (("cos_max", "cos max over keys", "#2ca02c"), ("cos_mean", "cos mean over keys",
                                                                               "#98df8a"),
                               ("cos_evidence_minus_other", "cos evidence - other keys", "#9467bd")):
        if name in metrics:
            fig.add_trace(go.Scatter(x=layers, y=metrics[name]["value"], mode="lines+markers", name=label,
                                     line=dict(color=color, width=2)), row=1, col=column)
    fig.update_xaxes(title_text="layer", dtick=1)
    style(fig, 440, titled=True)
    entropy = metrics["attn_entropy_bits"]["value"]
    text = (f"Per layer, the attention rows at {qk.get('rows', 'the query positions')} ({qk.get('n_rows')} rows, "
            f"{qk.get('n_sequences')} sequences): head-mean attention entropy ({fmt(entropy[0])} bits at layer "
            f"{layers[0]}, {fmt(entropy[-1])} at layer {layers[-1]})")
    if evidence:
        mass = metrics["evidence_mass"]["value"]
        text += (f", the attention mass on the evidence ({fmt(mass[0])} to {fmt(mass[-1])}, against "
                 f"{fmt(qk.get('evidence_uniform_share'))} for a uniform row)")
    caption = (text + " and the query-key cosines: look for entropy falling and mass gathering on the evidence "
               f"({REF_QK}).")
    if nulls:
        caption += " Dotted grey: untrained copies of the same architecture read on the same sequences."
    task = mech.get("task") or {}
    notes = [f"evidence ({task['name']}): {task['evidence']}"] if task.get("evidence") else []
    focus = mech.get("attention_focusing") or {}
    if focus.get("focusing") is not None:
        low, high = focus.get("focusing_ci95") or [None, None]
        notes.append(f"attention focusing 1 - H(L-1)/H(0) at {focus.get('rows')}: {pct(focus['focusing'])} "
                     f"[{pct(low)}, {pct(high)}]")
    return Figure("Mechanisms: Q-K alignment and attention on the evidence per layer", caption, fig, notes)


def _ablation_heatmap(mech: dict) -> Figure | None:
    ablation = mech.get("ablation") or {}
    delta = ablation.get("delta_mae_bits")
    if not delta:
        return None
    n_layers, n_heads = len(delta), len(delta[0])
    layers = [f"layer {layer}" for layer in range(n_layers)]
    whole = [[a, b] for a, b in zip(ablation.get("all_heads_delta_mae_bits") or [None] * n_layers,
                                    ablation.get("skip_layer_delta_mae_bits") or [None] * n_layers)]
    fig = make_subplots(rows=1, cols=2, column_widths=[0.65, 0.35], horizontal_spacing=0.16,
                        subplot_titles=("one head mean-ablated", "whole layer"))
    fig.add_trace(go.Heatmap(z=delta, x=[f"head {h}" for h in range(n_heads)], y=layers, coloraxis="coloraxis",
                             text=[[fmt(v, "+.4f") for v in row] for row in delta], texttemplate="%{text}",
                             hovertemplate="%{y}, %{x}: change in MAE %{z:+.4f} bits<extra></extra>"), row=1, col=1)
    fig.add_trace(go.Heatmap(z=whole, x=["all heads mean-ablated", "layer skipped"], y=layers, coloraxis="coloraxis2",
                             text=[[fmt(v, "+.3f") for v in row] for row in whole], texttemplate="%{text}",
                             hovertemplate="%{y}, %{x}: change in MAE %{z:+.4f} bits<extra></extra>"), row=1, col=2)
    fig.update_yaxes(autorange="reversed")
    style(fig, 140 + 60 * n_layers, titled=True,
          coloraxis=dict(colorscale="Reds", cmin=0, colorbar=dict(title="bits", x=0.555, xanchor="left",
                                                                  thickness=14, len=0.9)),
          coloraxis2=dict(colorscale="Reds", cmin=0, colorbar=dict(title="bits", x=1.01, xanchor="left",
                                                                   thickness=14, len=0.9)))
    base = ablation.get("baseline") or {}
    blind = ablation.get("context_blind") or {}
    first = ablation.get("layer0_heads") or {}
    caption = (f"Increase of the held-out entropy MAE against the exact posterior ({ablation.get('n_eval')} sequences; "
               f"unablated {fmt(base.get('entropy_mae_bits'), '.4f')} bits, context-blind "
               f"{fmt(blind.get('entropy_mae_bits'), '.3f')}) when one head's output is replaced by its mean, when "
               f"all of a layer's heads are, and when the layer is skipped: look for the cells that carry the "
               f"computation; layer 0 reads '{first.get('reading', '?')}' (head {first.get('top_head', '?')} "
               f"largest, {pct(first.get('share_of_total'))} of the layer-0 increases).")
    notes = [f"mean ablation: {ablation['mean_ablation']}"] if ablation.get("mean_ablation") else []
    if ablation.get("skip"):
        notes.append(f"skip: {ablation['skip']}")
    if first:
        notes.append(f"reading rule: 'concentrated' when the top head has at least {first.get('share_threshold')} "
                     f"of the summed positive increases and {first.get('ratio_threshold')}x the second; else 'spread'")
    return Figure("Mechanisms: head and layer ablations", caption, fig, notes)


def _ablation_table(mech: dict) -> Table | None:
    ablation = mech.get("ablation") or {}
    delta = ablation.get("delta_mae_bits")
    if not delta:
        return None
    heads = ablation.get("heads") or []
    header = ["layer"] + [f"head {h}" for h in range(len(delta[0]))] + ["all heads", "layer skipped"]
    rows = []
    for layer, row in enumerate(delta):
        cells = [f"{fmt(d, '+.4f')} ({fmt((heads[layer][h] or {}).get('entropy_mae_bits'), '.4f')})"
                 for h, d in enumerate(row)] if heads else [fmt(d, "+.4f") for d in row]
        rows.append([str(layer), *cells, fmt((ablation.get("all_heads_delta_mae_bits") or [None] * len(delta))[layer],
                                             "+.4f"),
                     fmt((ablation.get("skip_layer_delta_mae_bits") or [None] * len(delta))[layer], "+.4f")])
    base = ablation.get("baseline") or {}
    caption = (f"Change of the held-out entropy MAE (bits; the ablated MAE in brackets) against "
               f"{fmt(base.get('entropy_mae_bits'), '.4f')} bits unablated, over {ablation.get('n_eval')} sequences "
               f"scored like the wind tunnel's own evaluation: look for the heads and layers whose removal costs most.")
    return Table("Mechanisms: ablation table", caption, header, rows)


def _frame_table(mech: dict) -> Table | None:
    frame = mech.get("frame") or {}
    groups = frame.get("groups") or {}
    if not groups:
        return None

    def spread(entry):
        return "n/a" if not entry else f"{fmt(entry.get('mean'))} [{fmt(entry.get('p05'))}, {fmt(entry.get('p95'))}]"

    header = ["tokens", "n", "d_head", "trained (centred)", "raw", "analytic Gaussian", "Gaussian (centred)",
              "shuffled", "random tokens", "fresh init"]
    rows = []
    for name, group in groups.items():
        base = group.get("baselines") or {}
        rows.append([name, str(group.get("n_tokens")), str(group.get("d_head")), fmt(group.get("orth")),
                     fmt(group.get("raw")), fmt(base.get("analytic_gaussian")), spread(base.get("gaussian")),
                     spread(base.get("shuffled")), spread(base.get("random_tokens")),
                     fmt((base.get("init") or {}).get("mean"))])
    reference = ["paper I v3 (reference)", "", "", "0.052", "", "", "0.082 'random'", "", "", ""]
    headline = groups.get(frame.get("headline")) or next(iter(groups.values()))
    caption = (f"Mean |cos| between the layer-0 keys of the task's frame tokens, against random and initialisation "
               f"baselines centred the same way (spread: mean [5th, 95th percentile] over draws): look for trained "
               f"keys below the baselines; {frame.get('headline')}: {fmt(headline.get('orth'))} against "
               f"{fmt(((headline.get('baselines') or {}).get('gaussian') or {}).get('mean'))} for Gaussian keys "
               f"({REF_FRAME}).")
    notes = [text for text in (frame.get("keys"), frame.get("pool")) if text]
    return Table("Mechanisms: layer-0 hypothesis frame", caption, header, rows, reference, notes)


def _timescale_table(mech: dict) -> Table | None:
    timescale = mech.get("two_timescale") or {}
    settle = timescale.get("settling") or {}
    steps = settle.get("settling_step") or {}
    if not steps:
        return None
    before = settle.get("attention_settles_before") or {}
    labels = {"attention_distance_mean": "attention rows (frame)", "pc1": "value PC1 share",
              "abs_rho_pc1_bayes_entropy": "|rho(PC1, H_bayes)|", "entropy_mae_bits": "entropy MAE",
              "entropy_mae_log10": "entropy MAE, log10 scale"}
    rows = [[label, str(steps.get(key, "n/a")), "" if key == "attention_distance_mean" else
             {True: "yes", False: "no", None: "n/a"}[before.get(key)]] for key, label in labels.items()]
    caption = (f"The checkpoint step (of {settle.get('final_step')}) from which each frame-precision curve stays "
               f"within {settle.get('fraction')} of its largest distance from its final value, {timescale.get('how')}: "
               f"look for the attention frame settling before the precision curves ({REF_TWO_TIMESCALES}).")
    return Table("Mechanisms: two timescales", caption, ["curve", "settled at step", "attention settled earlier"],
                 rows, notes=[settle["rule"]] if settle.get("rule") else [])


def mechanisms_figures(run: RunData) -> list[Figure | Table]:
    mech = run.results.get("mechanisms")
    if not mech:
        return []
    items = [_qk_alignment(mech), _ablation_heatmap(mech), _ablation_table(mech), _frame_table(mech),
             _timescale_table(mech)]
    curves = (mech.get("two_timescale") or {}).get("curves")
    if run.curves is None and curves:  # computed by the suite: the wind-tunnel family has no curves.json to draw
        items.append(_dissociation(curves))
    return [item for item in items if item is not None]


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
    drawn = {suite for family in RUN_FIGURES for suite in family.suites}
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
PAPER_CODE_SECTION = f"Geometry: {PAPER_CODE_TITLE}"
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


def paper_code_figures(run: RunData) -> list[Figure | Table]:
    table = paper_code_table(run.results.get("geometry") or {}, "geometry", "Geometry")
    return [] if table is None else [table]


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


RUN_FIGURES: list[FigureFamily] = [
    FigureFamily("Value manifold", ("geometry", "domain"), value_manifold_figures,
                 lambda run: definitions_line(run, "geometry", " (the figures: geomprobe's; both in the "
                                                               "released-code section below)")),
    FigureFamily("Key orthogonality", ("geometry",), key_orthogonality_figures),
    FigureFamily("Attention focusing", ("geometry", "extract"), attention_figures),
    FigureFamily(PAPER_CODE_SECTION, ("geometry",), paper_code_figures, lambda run: definitions_line(run, "geometry")),
    FigureFamily("Against untrained copies", ("geometry", "domain", "sula", "mechanisms"), untrained_figures),
    FigureFamily("SULA: in-context Bayesian updating", ("sula",), sula_figures,
                 lambda run: definitions_line(run, "sula", " (the figures: geomprobe's; both in the last table)")),
    FigureFamily("Entropy-axis interventions", ("ablation",), ablation_figures),
    FigureFamily("Mechanisms (papers I and II)", ("mechanisms",), mechanisms_figures),
    FigureFamily("Wind tunnel", (), windtunnel_figures),
    FigureFamily("Other suites", (), other_suite_figures),
]


def register_figures(section: str, suites: tuple[str, ...], draw: Callable[[RunData], list[Figure | Table]]) -> None:
    """Draw a suite's results in the report: draw(run) returns Figures and Tables (run.results[suite]
    is its results.json). Placed before the wind-tunnel and catch-all sections."""
    RUN_FIGURES.insert(len(RUN_FIGURES) - 2, FigureFamily(section, tuple(suites), draw))

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
