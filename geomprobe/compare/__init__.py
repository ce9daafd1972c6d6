"""Aggregation across run directories: one tidy table over runs, suites and statistics, and the
cross-model table in the layout of paper III's Table 2.

    geomprobe compare runs/pythia-410m@step0 runs/pythia-410m -o reports/table   # tidy: CSV, JSON (, parquet)
    geomprobe compare runs/pythia-410m runs/phi-2 --layout table2 -o reports/t2    # paper III Table 2

The tidy table has one row per run x suite x statistic, for every finished suite (geometry,
domain, sula, ablation, mechanisms, extract; a plugin suite's top-level estimates and numbers):
the run's label `model@revision`, model, revision, training step (from a revision such as
`step1000` or `step-1000`; for the final model of a wind-tunnel training run, the `steps` of its
metrics.json), suite, statistic, value, its 95% CI, how it was made, n, and where the suite
compared the statistic with untrained copies (`untrained_null.comparisons`), the untrained mean,
model minus untrained with its CI, and the status. Statistics of one condition, prompt set, layer
or intervention carry it in brackets: `mae_bits[shuffled]`, `pc12[math]`, `delta_mae_bits[cut/multi]`.
Numbers are copied from the results files, never recomputed.

This package is the machinery; a suite's rows live with the suite. Each built-in suite folder's
compare.py (geomprobe/suites/<name>/compare.py, imported through geomprobe.suites.base.load_faces
the first time anything here reads the readers or the summary columns) calls
`register_compare(suite, reader, headlines=(Headline(statistic, header, direction, unit), ...))`:
the reader adds the suite's rows, the headlines say which statistics matter, which way is the
stronger form of the papers' property and in what unit; those declared with summary=True are the
columns of the compact summary (summary_columns), in the suite registry's order. A plug-in suite
calls register_compare the same way, or gets generic_reader (its top-level estimates, numbers and
short lists of numbers) and its first statistics as summary columns (plugin_columns).

A suite run with `--definitions paper-code` adds, after its other rows, three rows for each row of
its side-by-side table (results["paper_code"]["rows"]): `paper_code.<quantity>.<label slug>[<definition>]`,
the definition in brackets like a condition: `[geomprobe]` (geomprobe's number; method: its
definition), `[paper-code]` (the same quantity as the papers' released code defines it; method:
how, and the released file) and `[published]` (the figure the papers or their code report, on their
own model; method: where it comes from), e.g. `paper_code.sula_mae.sula_mae_bits[paper-code]`. A
row without a number (not a geomprobe headline, no published figure) is left out. These are new
statistic names rather than a new column, so the table of a run without paper-code numbers is
exactly what it was.

Table 2 reads <run>/geometry/results.json (and <run>/domain/results.json when present). The
paper's values sit in their own column, matched by model name; they are reference values, never
results.

The package: runs (which run is which: labels, training steps, order, finished suites), tidy (the
tidy table, the readers' registry and the compact summary) and paper_table (Table 2, the cross-model
basis, and compare(), which gives either layout). Every public name is importable from
geomprobe.compare.
"""

from __future__ import annotations

from .paper_table import (
    EARLY_FRACTION,
    LAYOUTS,
    PAPER_III,
    CompareRows,
    compare,
    markdown_table,
    paper_reference,
    print_table,
    row_for,
    shared_basis,
    table2,
)
from .runs import (
    DEFAULT_REVISION,
    RunIdentity,
    finished_results,
    identify,
    identities,
    ordered_runs,
    parse_step,
    suite_order,
    unique_labels,
)
from .tidy import (
    DIRECTIONS,
    GENERIC_LIST_MAX,
    PAPER_CODE_DEFINITIONS,
    PLUGIN_COLUMNS,
    STATUS_MARK,
    STATUS_WORD,
    TIDY_COLUMNS,
    Aggregate,
    Headline,
    Rows,
    ablation_headline,
    aggregate,
    ci_text,
    generic_reader,
    headlines,
    is_estimate,
    number,
    paper_code_statistic,
    plugin_columns,
    print_summary,
    register_compare,
    suite_readers,
    suite_rows,
    summary_cell,
    summary_columns,
    unregister_compare,
    value_of,
    write_tidy,
)

__all__ = ["Aggregate", "CompareRows",
           "DEFAULT_REVISION", "DIRECTIONS", "EARLY_FRACTION", "GENERIC_LIST_MAX", "Headline", "LAYOUTS",
           "PAPER_CODE_DEFINITIONS", "PAPER_III", "PLUGIN_COLUMNS", "Rows", "RunIdentity", "STATUS_MARK", "STATUS_WORD",
           "TIDY_COLUMNS", "ablation_headline", "aggregate", "ci_text", "compare", "finished_results",
           "generic_reader", "headlines", "identify", "identities", "is_estimate", "markdown_table", "number", "ordered_runs",
           "paper_code_statistic", "paper_reference", "parse_step", "plugin_columns", "print_summary", "print_table",
           "register_compare", "row_for", "shared_basis", "suite_order", "suite_readers", "suite_rows",
           "summary_cell", "summary_columns",
           "table2", "unique_labels", "unregister_compare", "value_of", "write_tidy"]


def __getattr__(name: str):
    """SUITE_READERS and SUMMARY_COLUMNS as before: suite_readers() and summary_columns(), read when
    asked for (so after the faces are loaded)."""
    if name == "SUITE_READERS":
        return suite_readers()
    if name == "SUMMARY_COLUMNS":
        return summary_columns()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
