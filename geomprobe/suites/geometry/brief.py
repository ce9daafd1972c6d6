"""The geometry suite's console brief (geomprobe.brief): its verdict's three criteria, each beside
the untrained copies, with the label; then the run's evidence line."""

from __future__ import annotations

from geomprobe.brief import model_cell, number, register_brief, words

# (the verdict's entry, the headline figure that carries it, the label)
CRITERIA = (("value_manifold", ("pc12", "pc1"), "value manifold PC1+PC2"),
            ("keys", ("keys_mean_abs_cos",), "keys: mean |cos| (lower is better)"),
            ("focusing", ("focusing",), "attention focusing"))


def criteria_rows(run, figures: dict, copies: bool):
    """(title, columns, rows) of the criteria table, or None without a verdict (the generic table)."""
    verdict = (run.results.get("geometry") or {}).get("verdict")
    if not (isinstance(verdict, dict) and verdict.get("label")):
        return None
    rows = []
    for entry, statistics, label in CRITERIA:
        figure = next((figures[s] for s in statistics if s in figures), None)
        if figure is None:
            continue
        state = (verdict.get(entry) or {}).get("state", "")
        name = label if figure["statistic"] != "pc1" else "value manifold PC1"
        rows.append([name, model_cell(figure), number(figure.get("untrained_mean")),
                     words(figure.get("vs_untrained"), copies), state])
    title = f"geometry: {run.model}: {verdict['label']} ({verdict.get('n_met')}/{verdict.get('n_criteria')} criteria met)"
    return title, ["criterion", "model [95% CI]", "untrained mean", "vs untrained", "met"], rows


register_brief("geometry", criteria_rows, evidence=True)
