"""The console's answer after each suite: one small table of the suite's headline figures (the
geometry suite's: its three criteria with the verdict), each beside its untrained copies' mean and
the words better / worse / indistinguishable; after geometry, sula and the ablation, one line with
the run's evidence of inference (geomprobe.analysis.verdict.evidence_of_inference). The full
tables (every layer, baseline and control) are printed with `--details` (run(..., details=True)),
and are in results.json and the report.

    print_brief(run_dir, suite)                 # after each suite of a run (geomprobe.runner)

reads what the suite wrote (geomprobe.results.Run.headlines), so the console shows the figures the
compare table and the report show, from the same file. A suite's `brief` face
(geomprobe/suites/<name>/brief.py, register_brief) may give its own rows (geometry: the criteria
of its verdict) and ask for the evidence line after it; this module names no suite.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Brief:
    """A suite's part in the console brief: rows(run, figures, copies) -> (title, columns, rows), or
    None for the generic table of its headlines; evidence: print the run's evidence line after it."""

    suite: str
    rows: Callable | None = None
    evidence: bool = False


BRIEFS: dict[str, Brief] = {}


def register_brief(suite: str, rows: Callable | None = None, evidence: bool = False) -> Brief:
    """Give `suite` its own console brief (Brief). A suite with one already is a ValueError."""
    if suite in BRIEFS:
        raise ValueError(f"register_brief: the {suite!r} suite already has a brief")
    BRIEFS[suite] = Brief(suite, rows, evidence)
    return BRIEFS[suite]


def briefs() -> dict[str, Brief]:
    """Every registered brief, after each suite folder's brief face is loaded."""
    from geomprobe.suites.base import load_faces

    load_faces("brief")
    return BRIEFS


def details_hint(run_dir: Path | str) -> str:
    """The line after the short summaries: where the full tables are."""
    return (f"full tables: --details (details=True from Python), {run_dir}/SUITE/results.json or "
            f"`geomprobe report {run_dir}`")


def number(value, spec: str = ".3f") -> str:
    return "-" if value is None else format(value, spec)


def model_cell(figure: dict) -> str:
    """The model's value with its 95% CI (and bits), as the brief's cells write it."""
    text = number(figure.get("value"))
    ci = figure.get("ci95")
    if ci is not None and ci[0] is not None:
        text += f" [{ci[0]:.3f}, {ci[1]:.3f}]"
    return text + (" bits" if figure.get("unit") == "bits" else "")


def words(status: str | None, copies: bool) -> str:
    """better / worse / indistinguishable, or why there is no comparison."""
    from geomprobe.analysis.null_comparison import status_words

    if not status:
        return "not compared" if copies else "no untrained copies"
    return status_words(status).replace(" than untrained", "").replace(" from untrained", "")


def brief_rows(run, suite: str) -> tuple[str, list[str], list[list[str]]]:
    """(title, columns, rows) of one suite's short summary in `run` (a geomprobe.results.Run)."""
    figures = {f["statistic"]: f for f in run.headlines(suite)}
    data = run.results.get(suite) or {}
    copies = bool(data.get("untrained_null"))
    own = briefs().get(suite)
    made = own.rows(run, figures, copies) if own is not None and own.rows is not None else None
    if made is not None:
        return made
    columns = ["figure", "model [95% CI]", "untrained mean", "vs untrained"]
    rows = [[f["header"], model_cell(f) if f.get("unit") != "verdict" else f"{f['text']} ({f['value']}/{f['n']})",
             number(f.get("untrained_mean")), words(f.get("vs_untrained"), copies)] for f in figures.values()]
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
    own = briefs().get(suite)
    if own is not None and own.evidence:
        console.print(evidence_line(load_run(run_dir)), highlight=False, markup=False)


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
