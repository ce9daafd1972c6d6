"""The geometry suite's report figures: the value manifold (with the domain suite's prompt sets,
geomprobe.suites.domain.figures), key orthogonality, attention focusing (the extract suite's
profile where geometry did not run), the side-by-side table of --definitions paper-code and the
cross-model signature chart of its card (METHODS.md sections 2-4, 6 and 11). Imported by
geomprobe.report through geomprobe.suites.base.load_faces; registers its sections with
geomprobe.report.figures.register_figures, its panels against untrained copies and its
statistics against training step."""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from geomprobe.report.definitions import PAPER_CODE_TITLE, definitions_line, paper_code_table
from geomprobe.report.figures import (
    BASELINES,
    MEASURED,
    NULL_SHUFFLE,
    PALETTE,
    SECOND,
    Figure,
    Table,
    ci_whiskers,
    coinciding,
    entropy_for,
    esc,
    fmt,
    hline_trace,
    log_axis,
    model_reference,
    paper_range,
    pct,
    prompt_hover,
    register_figures,
    register_untrained,
    style,
)
from geomprobe.report.rundata import RunData
from geomprobe.report.trajectories import register_trajectories
from geomprobe.suites.domain.figures import domain_figures

REF_MANIFOLD = ("paper III: wind tunnels PC1 84-90%; mixed-domain PC1+PC2 Pythia-410M 99.7%, Phi-2 60.6%, "
                "Llama-3.2-1B 51.4%, Mistral-7B 15-20%")
REF_KEYS = ("paper III claims 0.034-0.18 for trained models; the official code's Pythia-410M run gives 0.0297, "
            "about the Gaussian value for D=1024")
REF_FOCUSING = ("paper III: wind tunnels 85-90%, Phi-2 86%, Pythia-410M 82%, Llama-3.2-1B 31%, Mistral-7B "
                "20-30% and non-monotone")
PAPER_CODE_SECTION = f"Geometry: {PAPER_CODE_TITLE}"


# --------------------------------------------------------------------------------------------
# value manifold (METHODS.md section 2; the domain restriction, section 6, in domain/figures.py)


def _geometry_prompts(run: RunData, n: int) -> list[dict] | None:
    rows = run.jsonl("geometry/extraction/prompts.jsonl")
    return rows if rows and len(rows) == n else None


def _manifold_scatter(run: RunData, vm: dict) -> Figure | None:
    pc1, pc2 = vm.get("pc1_coords"), vm.get("pc2_coords")
    if not pc1 or not pc2:
        return None
    entropy = entropy_for(run, "geometry/extraction/next_entropy_bits.npy", len(pc1))
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
    entropy = entropy_for(run, "geometry/extraction/next_entropy_bits.npy", len(pc1 or []))
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
        drawn_at = sum(v is not None for v in nulls)  # runs since 2026-12-06: the last layer only (METHODS.md 2.6)
        if drawn_at:
            fig.add_trace(go.Scatter(x=layers, y=nulls, mode="lines" if drawn_at > 1 else "markers",
                                     name=f"{label} shuffle null", marker=dict(color=color, symbol="x", size=9),
                                     line=dict(color=color, dash="dot", width=1.5)))
    style(fig, 420, xaxis_title="layer", yaxis_title="share of variance", xaxis_dtick=1)
    caption = (f"PC1 and PC1+PC2 of the final-token vectors at every layer, with 95% CIs and the shuffle "
               f"null's median (x: at the last layer only, in runs since 2026-12-06): look for where the manifold "
               f"becomes low-dimensional (last layer: PC1 {pct(vm.get('pc1'))}, "
               f"PC1+PC2 {pct(vm.get('pc12'))}; paper III: wind tunnels PC1 84-90%).")
    notes = [f"layer {r['layer']}: {r['note']}" for r in rows if r.get("pc1") is None and r.get("note")]
    if drawn:
        last = [null["per_layer"][-1].get("pc1") for null in drawn]
        notes.append(f"dotted grey: PC1 of {len(drawn)} untrained copies on the same prompts (last layer "
                     + ", ".join(pct(v) for v in last) + "): the share an untrained network of this shape gives")
    return Figure("Value manifold per layer", caption, fig, notes)


def value_manifold_figures(run: RunData) -> list[Figure]:
    figures = []
    vm = (run.results.get("geometry") or {}).get("value_manifold")
    if vm:
        figures += [_manifold_scatter(run, vm), _pc1_entropy(run, vm), _spectrum(vm),
                    _per_layer(vm, _untrained_models(run, "geometry"))]
    return [f for f in figures if f is not None] + domain_figures(run)


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


def paper_code_figures(run: RunData) -> list[Figure | Table]:
    table = paper_code_table(run.results.get("geometry") or {}, "geometry", "Geometry")
    return [] if table is None else [table]


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


# the panels against untrained copies, by comparison name, and what their caption ends with
UNTRAINED_TITLES = {"pc1": "value manifold PC1", "pc12": "value manifold PC1+PC2",
                    "keys": "mean key |cos| (lower: more orthogonal)", "focusing": "attention focusing"}
UNTRAINED_RULE = ("A verdict criterion holds only when the paired-bootstrap CI of model minus null excludes 0 on the "
                  "favourable side.")

register_figures("Value manifold", ("geometry", "domain"), value_manifold_figures,
                 lambda run: definitions_line(run, "geometry", " (the figures: geomprobe's; both in the "
                                                               "released-code section below)"))
register_figures("Key orthogonality", ("geometry",), key_orthogonality_figures)
register_figures("Attention focusing", ("geometry", "extract"), attention_figures)
register_figures(PAPER_CODE_SECTION, ("geometry",), paper_code_figures, lambda run: definitions_line(run, "geometry"))
register_untrained("geometry", UNTRAINED_TITLES.get, UNTRAINED_RULE)
register_trajectories("geometry", (("pc1", "value manifold PC1"), ("pc12", "value manifold PC1+PC2"),
                                   ("keys_mean_abs_cos", "mean key |cos| over layers (lower: more orthogonal)"),
                                   ("focusing", "attention focusing 1 - H(L-1)/H(0)")))
