"""The domain suite's report figures: each prompt set's PCA and its PC1+PC2 against the mixed
set (METHODS.md section 6). They are drawn in the geometry suite's "Value manifold" section
(geomprobe.suites.geometry.figures), so this module registers no section of its own: only its
panels against untrained copies and its statistics against training step."""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from geomprobe.report.figures import (
    MEASURED,
    NULL_SHUFFLE,
    PALETTE,
    Figure,
    ci_whiskers,
    entropy_for,
    esc,
    fmt,
    model_reference,
    paper_range,
    pct,
    register_untrained,
    style,
)
from geomprobe.report.rundata import RunData
from geomprobe.report.trajectories import register_trajectories

REF_DOMAIN = "paper III, mathematics only: Pythia-410M 99.9%, Phi-2 63.5%, Llama-3.2-1B 73.6%, Mistral-7B ~80%"


def domain_scatter(run: RunData, domain: dict) -> Figure | None:
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
        entropy = entropy_for(run, f"domain/extraction-{label}/next_entropy_bits.npy", len(entry["pc1_coords"]))
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


def domain_bars(run: RunData, domain: dict) -> Figure | None:
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


def domain_figures(run: RunData) -> list[Figure]:
    """The domain suite's prompt sets (drawn in the geometry suite's "Value manifold" section)."""
    domain = run.results.get("domain")
    if not domain:
        return []
    return [f for f in (domain_scatter(run, domain), domain_bars(run, domain)) if f is not None]


def _untrained_title(name: str) -> str | None:
    """The panel of a pc12_gain_<set> comparison: 'PC1+PC2 gain, <set>'."""
    return f"PC1+PC2 gain, {name[len('pc12_gain_'):]}" if name.startswith("pc12_gain_") else None


register_untrained("domain", _untrained_title)
register_trajectories("domain", (("pc12_gain[*]", "PC1+PC2 gain over the mixed set"),))
