"""The report's figures: one function per figure family, each RunData -> list[Figure].

A family draws what the results on disk say and nothing else: no statistic is computed here
(STYLE.md). A family whose inputs are absent returns []; the page says what is missing.
To add a family (e.g. the SULA suite's), write `def sula_figures(run) -> list[Figure]` and
append `FigureFamily("SULA", ("sula",), sula_figures)` to RUN_FIGURES.

Captions are one sentence: what to look for, with the numbers read from the results and the
papers' reference values (PROTOCOL.md sections 2-5 and 9), which are references, never results.
"""

from __future__ import annotations

import html
import re
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

# Paper reference values (PROTOCOL.md); drawn or quoted as references only.
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
    "sula": "the SULA tunnel's optimum is the exact posterior (PROTOCOL.md section 9)",
}


@dataclass
class Figure:
    title: str
    caption: str  # one sentence: what to look for, and the paper's reference value where there is one
    fig: go.Figure
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class FigureFamily:
    section: str
    suites: tuple[str, ...]  # the <suite>/results.json files it draws (to tell what stays undrawn)
    draw: Callable[[RunData], list[Figure]]


# --------------------------------------------------------------------------------------------
# small drawing helpers


def fmt(value, spec: str = ".3f") -> str:
    return "n/a" if value is None else format(value, spec)


def pct(value) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def style(fig: go.Figure, height: int = 420, titled: bool = False, **layout) -> go.Figure:
    """The report's look; the legend sits in the top margin of the figure (not over subplot
    titles, which `titled` makes room for)."""
    defaults = dict(template="plotly_white", height=height, margin=dict(l=70, r=30, t=80 if titled else 50, b=50),
                    legend=dict(orientation="h", yref="container", y=0.99, yanchor="top", x=0,
                                traceorder="normal"), font=dict(size=12))
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


# --------------------------------------------------------------------------------------------
# value manifold (PROTOCOL.md section 2; domain restriction, section 6)


def _entropy_for(run: RunData, relative: str, n: int):
    entropy = run.array(relative)
    return entropy if entropy is not None and entropy.shape == (n,) else None


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
    fig = go.Figure(go.Scatter(x=pc1, y=pc2, mode="markers", marker=marker, name="prompts",
                               hovertemplate="PC1 %{x:.2f}<br>PC2 %{y:.2f}"
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


def _per_layer(vm: dict) -> Figure | None:
    rows = vm.get("per_layer") or []
    if not rows or all(r.get("pc1") is None for r in rows):
        return None
    layers = [r["layer"] for r in rows]
    fig = go.Figure()
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
    ci = (gain.get("ci95") or {}).get("pc12") or [None, None]
    return f"<br>gain over mixed {fmt(gain.get('pc12'), '+.3f')} [{fmt(ci[0], '+.3f')}, {fmt(ci[1], '+.3f')}]"


def value_manifold_figures(run: RunData) -> list[Figure]:
    figures = []
    vm = (run.results.get("geometry") or {}).get("value_manifold")
    if vm:
        figures += [_manifold_scatter(run, vm), _spectrum(vm), _per_layer(vm)]
    domain = run.results.get("domain")
    if domain:
        figures += [_domain_scatter(run, domain), _domain_bars(run, domain)]
    return [f for f in figures if f is not None]


# --------------------------------------------------------------------------------------------
# key orthogonality (PROTOCOL.md section 3)


def key_orthogonality_figures(run: RunData) -> list[Figure]:
    keys = (run.results.get("geometry") or {}).get("key_orthogonality")
    if not keys or not keys.get("layer_mean"):
        return []
    layer_mean = keys["layer_mean"]
    layers = list(range(len(layer_mean)))
    x0, x1 = layers[0], layers[-1]
    fig = go.Figure()
    if keys.get("layer_p10") and keys.get("layer_p90"):
        fig.add_trace(go.Scatter(x=layers, y=keys["layer_p90"], mode="lines", line=dict(width=0), showlegend=False,
                                 hoverinfo="skip"))
        fig.add_trace(go.Scatter(x=layers, y=keys["layer_p10"], mode="lines", line=dict(width=0), fill="tonexty",
                                 fillcolor="rgba(31,95,168,0.18)", name="p10-p90 over heads", hoverinfo="skip"))
    fig.add_trace(go.Scatter(x=layers, y=layer_mean, mode="lines+markers", name="trained: mean over heads",
                             line=dict(color=MEASURED, width=3)))
    if keys.get("analytic_gaussian") is not None:
        fig.add_trace(hline_trace(x0, x1, keys["analytic_gaussian"], "analytic Gaussian E|cos|",
                                  BASELINES["analytic"], "solid", opacity=0.35, line_width=8))
    empirical = keys.get("empirical_gaussian") or {}
    if empirical.get("mean") is not None:
        fig.add_trace(hline_trace(x0, x1, empirical["mean"], "empirical Gaussian", "#1b7a1b", "dot", line_width=3))
    baselines = keys.get("baselines") or {}
    if "init" in baselines:
        init = baselines["init"]
        fig.add_trace(hline_trace(x0, x1, init["mean"], f"fresh init ({init.get('n_seeds', '?')} seeds, mean)",
                                  BASELINES["init"], "dashdot"))
    if "step0" in baselines:
        step0 = baselines["step0"]
        if len(step0.get("layer_mean") or []) == len(layers):
            fig.add_trace(go.Scatter(x=layers, y=step0["layer_mean"], mode="lines+markers", name="step0 checkpoint",
                                     line=dict(color=BASELINES["step0"], dash="dash", width=2)))
        else:
            fig.add_trace(hline_trace(x0, x1, step0["mean"], "step0 checkpoint (mean)", BASELINES["step0"]))
    style(fig, 420, xaxis_title="layer", yaxis_title="mean |cos| between key columns", xaxis_dtick=1)
    threshold = keys.get("threshold")
    caption = (f"Mean absolute cosine between the {keys.get('n_vectors', 'd')} key columns of W_K per layer "
               f"(line: mean over heads, band: 10th-90th percentile) against the computed random and "
               f"initialisation baselines: look for how far trained keys sit from the baselines; "
               f"{pct(keys.get('fraction_below'))} of layers are below the verdict threshold {fmt(threshold, '.2f')} "
               f"({REF_KEYS}).")
    notes = [f"{name}: {text}" for name, text in (keys.get("notes") or {}).items()]
    if keys.get("init_note") and "init" in baselines:
        notes.append(f"init: {keys['init_note']}")
    if keys.get("ln_folded") or keys.get("fold_ln"):
        notes.append("W_K rows multiplied by the preceding norm's scale (fold_ln)")
    return [Figure("Key orthogonality per layer", caption, fig, notes)]


# --------------------------------------------------------------------------------------------
# attention focusing (PROTOCOL.md section 4)


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
    fig.update_yaxes(title_text="final-token attention entropy (bits)", row=1, col=1)
    fig.update_yaxes(title_text="entropy / log2(visible keys)", row=1, col=2)
    style(fig, 440, titled=True)
    if focus and focus.get("focusing") is not None:
        measured = f"here {pct(focus['focusing'])}"
    else:
        measured = "the focusing ratio is computed by the geometry suite, not run here"
    caption = (f"Mean over query heads of the final token's attention entropy per layer ({source}), with bootstrap "
               f"95% CIs: look for entropy falling from the first to the last layer, {measured} ({REF_FOCUSING}).")
    return [Figure("Attention focusing per layer", caption, fig, notes)]


# --------------------------------------------------------------------------------------------
# wind tunnels (PROTOCOL.md section 9; paper II's frame-precision dissociation)


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
               + f" ({REF_WINDTUNNEL.get(task, 'PROTOCOL.md section 9')}).")
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


RUN_FIGURES: list[FigureFamily] = [
    FigureFamily("Value manifold", ("geometry", "domain"), value_manifold_figures),
    FigureFamily("Key orthogonality", ("geometry",), key_orthogonality_figures),
    FigureFamily("Attention focusing", ("geometry", "extract"), attention_figures),
    FigureFamily("Wind tunnel", (), windtunnel_figures),
]


# --------------------------------------------------------------------------------------------
# cross-model (paper III Table 2): the three signatures, each a fraction on one 0-1 axis


def signature_chart(rows: list[dict], thresholds: dict) -> Figure:
    """rows: geomprobe.compare.row_for(...) of each run; thresholds: the first run's verdict thresholds."""
    names = [row["model"] for row in rows]
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
