"""The report's figures from Python, as plotly objects, and the key-cosine heatmaps.

    from geomprobe import plot
    figs = plot.figures("runs/pythia-410m")              # {title: plotly Figure}, in report order
    figs = result.figures(section="Value manifold")      # the same from a Run (what run() returns)
    plot.key_cosines(result)                             # layer x head heatmap of mean |cos| between key columns
    plot.key_cosine_matrix(loaded, layer=3, head=0)      # one head's d_head x d_head |cos| matrix, from the weights

Every figure is the one the HTML report draws (geomprobe.report.figures: each suite's families,
then the untrained-copies and wind-tunnel panels); its caption and section are in
`fig.layout.meta` ({"caption", "section", "notes"}), its title in `fig.layout.title`. Nothing is
recomputed: the figures draw what the run's results files hold. Tables of the report are not
figures: read them as DataFrames (Run.table, Run.frame).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from geomprobe.errors import ConfigError, RunDirectoryError


def _run_path(run) -> Path:
    return Path(run.path if hasattr(run, "path") and not isinstance(run, (str, Path)) else run)


def sections(run) -> list[str]:
    """The report's sections that have figures for this run, in page order."""
    return list(dict.fromkeys(fig.layout.meta["section"] for fig in figures(run).values()))


def figures(run, section: str | None = None) -> dict:
    """{title: plotly.graph_objects.Figure} of one run directory (a path or a Run), as the report
    draws them, in page order; `section` keeps one section (its name as the report heads it, e.g.
    "Value manifold"; an unknown one is a one-line error listing those there are). A title that
    appears twice gets " (2)" added."""
    from geomprobe.report.figures import Figure, run_figure_families
    from geomprobe.report.rundata import load_run

    data = load_run(_run_path(run))
    out, found = {}, []
    for family in run_figure_families():
        items = [item for item in family.draw(data) if isinstance(item, Figure)]
        if items:
            found.append(family.section)
        if section is not None and family.section != section:
            continue
        for item in items:
            fig = item.fig
            if not fig.layout.title.text:
                fig.update_layout(title=item.title)
            fig.update_layout(meta={"caption": item.caption, "section": family.section, "notes": list(item.notes)})
            title, copy = item.title, 2
            while title in out:
                title, copy = f"{item.title} ({copy})", copy + 1
            out[title] = fig
    if section is not None and section not in found:
        listed = ", ".join(repr(name) for name in found) or "none (no finished suite with figures)"
        raise ConfigError(f"no figures in section {section!r} for {_run_path(run)}: its sections are {listed}")
    return out


def key_cosines(run, baseline: str | None = "init"):
    """Heatmap (layer x head) of each head's mean |cos| between the columns of its key matrix W_K
    (METHODS.md section 3; the geometry suite's key_orthogonality.per_head), titled with the model's mean beside
    the untrained copies' (`baseline`: "init", "step0" or None). Lower is more orthogonal. Needs a
    finished geometry suite in the run."""
    import plotly.graph_objects as go

    from geomprobe.report.rundata import load_run

    path = _run_path(run)
    data = load_run(path)
    keys = (data.results.get("geometry") or {}).get("key_orthogonality")
    if not isinstance(keys, dict) or not keys.get("per_head"):
        raise RunDirectoryError(f"{path} has no finished geometry suite with key results: run "
                                f"`geomprobe run --suite geometry --out {path}` first")
    return _heatmap(go, keys["per_head"], keys, baseline, data.model)


def _heatmap(go, per_head, keys: dict, baseline: str | None, model: str):
    width = max(len(row) for row in per_head)
    z = [[float(v) for v in row] + [None] * (width - len(row)) for row in per_head]
    title = f"{model}: mean |cos| between key columns, per head (lower: more orthogonal)"
    reference = (keys.get("baselines") or {}).get(baseline) if baseline else None
    if isinstance(reference, dict) and reference.get("mean") is not None:
        title += f"<br><sub>model mean {keys['mean']:.3f}; untrained ({baseline}) {reference['mean']:.3f}</sub>"
    fig = go.Figure(go.Heatmap(z=z, x=list(range(width)), y=list(range(len(z))), colorscale="Viridis",
                               colorbar=dict(title="mean |cos|"),
                               hovertemplate="layer %{y}, head %{x}: %{z:.3f}<extra></extra>"))
    fig.update_layout(title=title, xaxis_title="key head (distinct: grouped-query heads share one)",
                      yaxis_title="layer", height=max(300, 22 * len(z) + 120),
                      meta={"caption": "Each cell: one head's mean |cos| over pairs of its W_K columns.",
                            "section": "Key orthogonality", "notes": []})
    return fig


def key_cosine_matrix(model, layer: int, head: int = 0, fold_ln: bool = False):
    """Heatmap of one key head's |cos| between every pair of its W_K columns (d_head x d_head; the
    diagonal is 1), from a model's weights: `model` is anything geomprobe.load_model takes (an
    alias, a LoadedModel, a Hugging Face model). Its off-diagonal mean is the head's value in
    key_cosines."""
    import plotly.graph_objects as go

    from geomprobe.models import load_model
    from geomprobe.weights import key_weight_stack

    loaded = load_model(model)
    stack = key_weight_stack(loaded, fold_ln=fold_ln)  # per layer [n_kv_heads, D, d_head]
    layer = loaded.adapter.check_layer(int(layer))
    weights = np.asarray(stack[layer], dtype=np.float64)
    if not 0 <= head < weights.shape[0]:
        raise ConfigError(f"head {head}: layer {layer} has {weights.shape[0]} distinct key heads (0 to "
                          f"{weights.shape[0] - 1})")
    columns = weights[head]
    norms = np.linalg.norm(columns, axis=0)
    kept = norms > 0
    unit = columns[:, kept] / norms[kept]
    cosines = np.abs(unit.T @ unit)
    d = cosines.shape[0]
    mean = (cosines.sum() - np.trace(cosines)) / (d * (d - 1)) if d > 1 else float("nan")
    fig = go.Figure(go.Heatmap(z=cosines, colorscale="Viridis", zmin=0, zmax=1, colorbar=dict(title="|cos|"),
                               hovertemplate="column %{x} vs %{y}: %{z:.3f}<extra></extra>"))
    fig.update_layout(title=f"{loaded.spec}: |cos| between W_K columns, layer {layer}, key head {head} "
                            f"(off-diagonal mean {mean:.3f})", xaxis_title="key column", yaxis_title="key column",
                      height=460, width=520, yaxis=dict(autorange="reversed"),
                      meta={"caption": "Near 0 off the diagonal: near-orthogonal key directions.",
                            "section": "Key orthogonality", "notes": [], "off_diagonal_mean": float(mean)})
    return fig


__all__ = ["figures", "key_cosine_matrix", "key_cosines", "sections"]
