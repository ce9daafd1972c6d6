"""The sula suite's report figures: in-context Bayesian updating against the exact posterior
(METHODS.md section 7). Imported by geomprobe.report through geomprobe.suites.base.load_faces;
registers its section with geomprobe.report.figures.register_figures, its panels against
untrained copies and its statistics against training step."""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from geomprobe.report.definitions import definitions_line, paper_code_table
from geomprobe.report.figures import (
    MEASURED,
    NULL_SHUFFLE,
    PALETTE,
    SECOND,
    Figure,
    Table,
    ci_whiskers,
    esc,
    estimate,
    fmt,
    interval,
    log_axis,
    pct,
    prompt_hover,
    register_figures,
    register_untrained,
    style,
    with_ci,
)
from geomprobe.report.rundata import RunData
from geomprobe.report.trajectories import register_trajectories

REF_SULA_MAE = "paper III, LLMs: SULA MAE 0.31-0.44 bits (Phi-2 0.31, Llama-3.2-1B 0.36, Pythia-410M 0.44)"
REF_SULA_PC1 = ("paper III, LLMs: |rho(PC1, H_bayes)| 0.65-0.80; rho(k, PC1) 0.86 Pythia-410M, 0.60 Phi-2, "
                "0.32 Llama-3.2-1B")


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


register_figures("SULA: in-context Bayesian updating", ("sula",), sula_figures,
                 lambda run: definitions_line(run, "sula", " (the figures: geomprobe's; both in the last table)"))
register_untrained("sula", {"mae_bits": "SULA MAE, bits (lower: better)",
                            "abs_rho_pc1_H_bayes_given_k": "|rho(PC1, H_bayes) given k|"}.get)
register_trajectories("sula", (("mae_bits", "SULA MAE |H_model - H_bayes| (bits)"),
                               ("rho_pc1_H_bayes_given_k", "SULA rho(PC1, H_bayes) given k (controlled)"),
                               ("rho_pc1_H_bayes", "SULA rho(PC1, H_bayes), raw (confounded with k)"),
                               ("rho_k_pc1", "SULA rho(k, PC1) (the confound)")))
