"""The mechanisms suite's report figures (papers I and II): Q-K alignment, head and layer
ablations, the layer-0 frame and the two timescales. Imported by geomprobe.report through
geomprobe.suites.base.load_faces; registers its section with
geomprobe.report.figures.register_figures, its panels against untrained copies and its
statistics against training step."""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from geomprobe.report.figures import (
    MEASURED,
    NULL_SHUFFLE,
    SECOND,
    Figure,
    Table,
    ci_whiskers,
    dissociation,
    esc,
    fmt,
    hline_trace,
    pct,
    register_figures,
    register_untrained,
    style,
)
from geomprobe.report.rundata import RunData
from geomprobe.report.trajectories import register_trajectories

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
        items.append(dissociation(curves))
    return [item for item in items if item is not None]


register_figures("Mechanisms (papers I and II)", ("mechanisms",), mechanisms_figures)
register_untrained("mechanisms", {"evidence_mass": "evidence mass, last layer",
                                  "cos_evidence_minus_other": "cos evidence - other, last layer",
                                  "focusing": "attention focusing"}.get)
register_trajectories("mechanisms", (("evidence_mass", "attention mass on the evidence, last layer"),
                                     ("focusing", "attention focusing on the mechanisms rows")))
