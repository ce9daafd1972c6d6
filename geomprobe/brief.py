"""The console's answer after each suite: one small table of the suite's headline figures (the
geometry suite's: its three criteria with the verdict), each beside its untrained copies' mean and
the words better / worse / indistinguishable; after geometry, sula and the ablation, one line with
the run's evidence of inference (geomprobe.analysis.verdict.evidence_of_inference). The full
tables (every layer, baseline and control) are printed with `--details` (run(..., details=True)),
and are in results.json and the report.

    print_brief(run_dir, "geometry")

reads what the suite wrote (geomprobe.results.Run.headlines), so the console shows the figures the
compare table and the report show, from the same file.
"""

from __future__ import annotations

from pathlib import Path

# geometry's criteria: (the verdict's entry, the headline figure that carries it, the label)
CRITERIA = (("value_manifold", ("pc12", "pc1"), "value manifold PC1+PC2"),
            ("keys", ("keys_mean_abs_cos",), "keys: mean |cos| (lower is better)"),
            ("focusing", ("focusing",), "attention focusing"))

def details_hint(run_dir: Path | str) -> str:
    """The line after the short summaries: where the full tables are."""
    return (f"full tables: --details (details=True from Python), {run_dir}/SUITE/results.json or "
            f"`geomprobe report {run_dir}`")


def _number(value, spec: str = ".3f") -> str:
    return "-" if value is None else format(value, spec)


def _model_cell(figure: dict) -> str:
    text = _number(figure.get("value"))
    ci = figure.get("ci95")
    if ci is not None and ci[0] is not None:
        text += f" [{ci[0]:.3f}, {ci[1]:.3f}]"
    return text + (" bits" if figure.get("unit") == "bits" else "")


def _words(status: str | None, copies: bool) -> str:
    from geomprobe.analysis.null_comparison import status_words

    if not status:
        return "not compared" if copies else "no untrained copies"
    return status_words(status).replace(" than untrained", "").replace(" from untrained", "")


def brief_rows(run, suite: str) -> tuple[str, list[str], list[list[str]]]:
    """(title, columns, rows) of one suite's short summary in `run` (a geomprobe.results.Run)."""
    figures = {f["statistic"]: f for f in run.headlines(suite)}
    data = run.results.get(suite) or {}
    columns = ["figure", "model [95% CI]", "untrained mean", "vs untrained"]
    verdict = data.get("verdict") if suite == "geometry" else None
    copies = bool(data.get("untrained_null"))
    if isinstance(verdict, dict) and verdict.get("label"):
        rows = []
        for entry, statistics, label in CRITERIA:
            figure = next((figures[s] for s in statistics if s in figures), None)
            if figure is None:
                continue
            state = (verdict.get(entry) or {}).get("state", "")
            name = label if figure["statistic"] != "pc1" else "value manifold PC1"
            rows.append([name, _model_cell(figure), _number(figure.get("untrained_mean")),
                         _words(figure.get("vs_untrained"), copies), state])
        title = (f"geometry: {run.model}: {verdict['label']} ({verdict.get('n_met')}/{verdict.get('n_criteria')} "
                 "criteria met)")
        return title, ["criterion", *columns[1:], "met"], rows
    rows = [[f["header"], _model_cell(f) if f.get("unit") != "verdict" else f"{f['text']} ({f['value']}/{f['n']})",
             _number(f.get("untrained_mean")), _words(f.get("vs_untrained"), copies)] for f in figures.values()]
    return f"{suite}: {run.model}", columns, rows


def print_brief(run_dir: Path | str, suite: str) -> None:
    """Print one suite's short summary (module docstring) on stdout; nothing when it has no figures."""
    from rich.table import Table

    from geomprobe.console import table_console
    from geomprobe.results import load_run

    title, columns, rows = brief_rows(load_run(run_dir), suite)
    if not rows:
        return
    table = Table(title=title, title_justify="left")
    for i, column in enumerate(columns):
        table.add_column(column, justify="left" if i == 0 or column in ("vs untrained", "met") else "right")
    for row in rows:
        table.add_row(*row)
    console = table_console(min_width=100)
    console.print(table)
    if suite in EVIDENCE_SUITES:
        console.print(evidence_line(load_run(run_dir)), highlight=False, markup=False)


EVIDENCE_SUITES = ("geometry", "sula", "ablation")


def evidence_line(run) -> str:
    """'evidence of inference: sula MAE to H_bayes better than untrained (rank, p 0.050)': the run's
    evidence of inference (geomprobe.analysis.verdict.evidence_of_inference), one line."""
    evidence = run.evidence()
    primary = evidence["primary"]
    if primary is None:
        return (f"{evidence['words']}: it needs sula or the ablation against untrained copies (the geometry criteria "
                "do not count: a copy-task model can meet them)")
    from geomprobe.analysis.null_comparison import status_words

    p_value = primary.get("p_value")
    return (f"{evidence['words']}: {primary['comparison']} {status_words(primary['status'])} ({primary.get('rule')}"
            + ("" if p_value is None else f", p {p_value:.3f}") + ")")
