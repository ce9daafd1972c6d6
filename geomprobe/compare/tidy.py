"""The tidy table (the CLI's default layout): one row per run x suite x statistic, read by each suite's
registered reader (or generic_reader), with the paper-code rows, written as CSV, JSON and parquet, and
the compact per-run summary built from the suites' headlines. The machinery the suites' compare faces
register with (register_compare, Headline, Rows).
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from geomprobe.console import table_console
from geomprobe.errors import ConfigError, RunDirectoryError
from geomprobe.rundir import atomic_write_bytes, atomic_write_json, atomic_write_text

from .runs import RunIdentity, finished_results, identities, ordered_runs

TIDY_COLUMNS = ("run", "model", "revision", "step", "suite", "statistic", "value", "text", "ci_low", "ci_high",
                "method", "n", "p_value", "untrained_null_mean", "diff_vs_untrained", "diff_ci_low", "diff_ci_high",
                "status_vs_untrained", "run_dir", "commit")


# --------------------------------------------------------------------------------------------
# the tidy rows of one suite's results


def number(value):
    """A finite int or float as it is; anything else (bool, NaN, a string, None) -> None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value if math.isfinite(value) else None


def reported(value):
    """A number as results.json holds it, NaN and infinities included (a statistic of a degenerate
    sample, or a damaged file: the table shows it, never drops it); anything else (bool, a string,
    None) -> None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value


def nonfinite(value) -> bool:
    return isinstance(value, float) and not math.isfinite(value)


def _ci(ci) -> tuple:
    if isinstance(ci, (list, tuple)) and len(ci) == 2:
        return reported(ci[0]), reported(ci[1])
    return None, None


def is_estimate(entry) -> bool:
    """An Estimate as results files write one: a dict with a value and a ci95."""
    return isinstance(entry, dict) and "value" in entry and "ci95" in entry


class Rows:
    """The tidy rows of one suite's results as a reader adds them (statistic, value, CI, method, n,
    text, p-value; suite_rows adds the run's columns)."""

    def __init__(self):
        self.rows: list[dict] = []

    def add(self, statistic: str, value, ci=None, method: str | None = "", n=None, text: str = "", p_value=None):
        low, high = _ci(ci)
        self.rows.append({"statistic": statistic, "value": reported(value), "text": text or "", "ci_low": low,
                          "ci_high": high, "method": method or "", "n": n if isinstance(n, int) else None,
                          "p_value": reported(p_value), "untrained_null_mean": None, "diff_vs_untrained": None,
                          "diff_ci_low": None, "diff_ci_high": None, "status_vs_untrained": ""})

    def estimate(self, statistic: str, entry, text: str = "", method_suffix: str = ""):
        """An Estimate {value, ci95, method, n[, pvalue]}, copied as it is; a scalar estimate only."""
        if not is_estimate(entry) or isinstance(entry.get("value"), list):
            return
        self.add(statistic, entry.get("value"), entry.get("ci95"), (entry.get("method") or "") + method_suffix,
                 entry.get("n"), text, entry.get("pvalue"))

    def compare(self, comparison: dict, statistic: str, name: str) -> None:
        """Fill a statistic's untrained-null columns from an untrained_null.comparisons entry (its own
        row when no row of that statistic was written)."""
        if not isinstance(comparison, dict):
            return
        row = next((r for r in self.rows if r["statistic"] == statistic), None)
        if row is None:
            difference = comparison.get("difference") or {}
            self.add(statistic, comparison.get("model"), None, comparison.get("statistic") or name,
                     difference.get("n") if isinstance(difference, dict) else None)
            row = self.rows[-1]
        difference = comparison.get("difference") if isinstance(comparison.get("difference"), dict) else {}
        low, high = _ci(difference.get("ci95"))
        row.update(untrained_null_mean=reported(comparison.get("null_mean")),
                   diff_vs_untrained=reported(difference.get("value")), diff_ci_low=low, diff_ci_high=high,
                   status_vs_untrained=str(comparison.get("status") or ""))


def ci_text(methods: dict, key: str, over: str = "prompts") -> str:
    """'<method> 95% CI over prompts' from a results ci_method map; '' when it names none."""
    method = (methods or {}).get(key) if isinstance(methods, dict) else None
    return f"{method} 95% CI over {over}" if method else ""


def ablation_headline(ablation: dict) -> dict | None:
    """The headline condition of an ablation suite's results: the true cut on the largest layer set
    (paper III's multi-layer cut), else the first condition (its compare rows and the report's
    figures both use it)."""
    conditions = [c for c in ablation.get("conditions") or [] if isinstance(c, dict)]
    if not conditions:
        return None
    cuts = [c for c in conditions if c.get("op") == "cut"] or conditions
    return max(cuts, key=lambda c: len(c.get("layers") or []))


GENERIC_LIST_MAX = 20  # a list of at most this many numbers becomes one row per item


def generic_reader(r: dict, rows: Rows) -> dict:
    """A suite without its own reader (a plug-in): top-level estimates and numbers, short lists of
    numbers (one row per item, key[i]), and the same one level below."""
    def read(key: str, value, nested: bool) -> None:
        if is_estimate(value):
            rows.estimate(key, value)
        elif reported(value) is not None:
            rows.add(key, value)
        elif isinstance(value, list) and 0 < len(value) <= GENERIC_LIST_MAX and \
                all(reported(item) is not None for item in value):
            for index, item in enumerate(value):
                rows.add(f"{key}[{index}]", item)
        elif isinstance(value, dict) and not nested:
            for sub, entry in value.items():
                read(f"{key}.{sub}", entry, True)

    for key, value in r.items():
        if key not in ("schema_version", "suite", "model", "geomprobe_version", "untrained_null"):
            read(key, value, False)
    return {}


# --------------------------------------------------------------------------------------------
# the suites' readers and headline statistics: each suite folder's compare face registers its own

DIRECTIONS = ("higher", "lower", "none")


@dataclass(frozen=True)
class Headline:
    """A headline statistic a suite declares: its tidy statistic (a trailing `[*]` stands for the
    condition the suite's headline_condition row names, see summary_cell), the summary's column
    header, which way is the stronger form of the papers' property ("higher", "lower", or "none"
    where neither is, e.g. a signed correlation), and the unit of its value ("fraction", "bits",
    "mean |cos|", "correlation", "verdict", ...). summary=False: declared, but not a column of the
    compact summary (summary_columns)."""

    statistic: str
    header: str
    direction: str = "none"
    unit: str = ""
    summary: bool = True

    def __post_init__(self):
        if self.direction not in DIRECTIONS:
            raise ValueError(f"Headline {self.statistic!r}: direction must be one of {', '.join(DIRECTIONS)}, "
                             f"got {self.direction!r}")


_READERS: dict[str, Callable[[dict, Rows], dict]] = {}  # suite -> reader(results, rows) -> {null name: statistic}
_HEADLINES: dict[str, tuple[Headline, ...]] = {}
_loading_faces = False


def _load_faces() -> None:
    """Import every suite folder's compare face (geomprobe.suites.base.load_faces); each registers
    itself. A face registering itself while the faces load does not load them again."""
    global _loading_faces
    if _loading_faces:
        return
    from geomprobe.suites.base import load_faces

    _loading_faces = True
    try:
        load_faces("compare")
    finally:
        _loading_faces = False


def register_compare(suite: str, reader: Callable[[dict, Rows], dict], headlines=()) -> None:
    """Give a suite its compare rows: reader(results, rows) adds the suite's rows to a Rows and
    returns {untrained_null.comparisons name: statistic} for comparisons whose name is not the
    statistic's; headlines: its Headline declarations (the summary's columns, in the suite registry's
    order). A built-in suite's folder registers its own in compare.py; a suite without one is read
    by generic_reader. Registering a suite twice is a ValueError."""
    _load_faces()
    if suite in _READERS:
        raise ValueError(f"register_compare: the {suite} suite already has a compare reader")
    headlines = tuple(headlines)
    for headline in headlines:
        if not isinstance(headline, Headline):
            raise TypeError(f"register_compare: {suite}'s headlines must be Headline, got {headline!r}")
    _READERS[suite] = reader
    _HEADLINES[suite] = headlines


def unregister_compare(suite: str) -> Callable:
    """Remove a suite's reader and headlines (it is read by generic_reader again); returns the reader."""
    _HEADLINES.pop(suite, None)
    return _READERS.pop(suite)


def _registry_order(suites) -> list[str]:
    from geomprobe.suites.base import SUITES

    rank = {name: i for i, name in enumerate(SUITES)}
    return sorted(suites, key=lambda suite: rank.get(suite, len(rank)))  # stable: others as registered


def suite_readers() -> dict[str, Callable]:
    """suite -> its registered reader, every compare face loaded first."""
    _load_faces()
    return {suite: _READERS[suite] for suite in _registry_order(_READERS)}


def headlines() -> list[tuple[str, Headline]]:
    """(suite, Headline) of every registered suite, in the suite registry's order, each suite's as
    declared; every compare face loaded first."""
    _load_faces()
    return [(suite, headline) for suite in _registry_order(_HEADLINES) for headline in _HEADLINES[suite]]


def summary_columns() -> tuple[tuple[str, str, str], ...]:
    """(suite, statistic, header) of the compact summary: the headlines declared with summary=True."""
    return tuple((suite, h.statistic, h.header) for suite, h in headlines() if h.summary)


# (the side-by-side row's key, the definition in the statistic's brackets)
PAPER_CODE_DEFINITIONS = (("geomprobe", "geomprobe"), ("paper_code", "paper-code"), ("published", "published"))


def _slug(text: str) -> str:
    """'rho(PC1, H_bayes), values' -> 'rho_pc1_h_bayes_values'."""
    return re.sub(r"[^0-9a-z]+", "_", str(text).lower()).strip("_") or "row"


def paper_code_statistic(row: dict, definition: str, slug: str | None = None) -> str:
    """The tidy statistic of one side-by-side row under one definition (geomprobe, paper-code, published)."""
    return f"paper_code.{row.get('quantity')}.{slug or _slug(row.get('label') or '')}[{definition}]"


def _paper_code(r: dict, rows: Rows) -> None:
    """Three rows per side-by-side row of a suite run with --definitions paper-code (the geomprobe.compare docstring)."""
    table = r.get("paper_code")
    if not isinstance(table, dict):
        return
    seen: dict[tuple, int] = {}
    for row in table.get("rows") or []:
        if not isinstance(row, dict):
            continue
        key = (row.get("quantity"), _slug(row.get("label") or ""))
        seen[key] = seen.get(key, 0) + 1  # two rows of one quantity with one label stay apart
        slug = key[1] + (f"_{seen[key]}" if seen[key] > 1 else "")
        same = "; the same definition as geomprobe's" if row.get("same_definition") else ""
        released = f" ({row['released_file']})" if row.get("released_file") else ""
        methods = {"geomprobe": row.get("geomprobe_how"), "paper_code": f"{row.get('paper_code_how') or ''}{same}{released}",
                   "published": row.get("published_source")}
        for column, definition in PAPER_CODE_DEFINITIONS:
            rows.add(paper_code_statistic(row, definition, slug), row.get(column), None, methods[column])


def suite_rows(run: RunIdentity, suite: str, results: dict) -> list[dict]:
    """The tidy rows of one suite's results.json: the headline statistics, then each
    untrained_null.comparisons entry (into the row of its statistic, or a row of its own)."""
    rows = Rows()
    mapping = suite_readers().get(suite, generic_reader)(results, rows)
    for name, comparison in (((results.get("untrained_null") or {}).get("comparisons")) or {}).items():
        rows.compare(comparison, mapping.get(name, name), name)
    _paper_code(results, rows)
    head = {"run": run.label, "model": run.model, "revision": run.revision, "step": run.step, "suite": suite}
    tail = {"run_dir": run.run_dir, "commit": run.commit or ""}
    kept = [row for row in rows.rows if row["value"] is not None or row["text"] or row["status_vs_untrained"]]
    return [{**head, **row, **tail} for row in kept]


@dataclass
class Aggregate:
    runs: list[RunIdentity]
    rows: list[dict]
    suites: dict[str, list[str]] = field(default_factory=dict)  # run label -> suites in the table
    notes: list[str] = field(default_factory=list)  # suites and runs left out, and why


NUMBER_COLUMNS = ("value", "ci_low", "ci_high", "p_value", "untrained_null_mean", "diff_vs_untrained", "diff_ci_low",
                  "diff_ci_high")


def _nonfinite_note(path: Path, rows: list[dict]) -> list[str]:
    """A note naming the statistics whose numbers in `path` are NaN or infinite (kept in the table
    as they are), or none."""
    odd = [row["statistic"] for row in rows if any(nonfinite(row.get(column)) for column in NUMBER_COLUMNS)]
    if not odd:
        return []
    more = f" and {len(odd) - 3} more" if len(odd) > 3 else ""
    return [f"{path} holds NaN or infinite numbers for {', '.join(odd[:3])}{more}: kept in the table as nan/inf"]


def aggregate(run_dirs: list[str | Path]) -> Aggregate:
    """The tidy table of the runs' finished suites. A run with no finished suite is left out with a
    note; none at all is a one-line error."""
    if not run_dirs:
        raise ConfigError("give at least one run directory")
    read = [finished_results(run_dir) for run_dir in run_dirs]
    runs = identities(run_dirs, [manifest for manifest, _, _ in read])
    order = ordered_runs(runs)
    runs, read = [runs[i] for i in order], [read[i] for i in order]
    table = Aggregate(runs=runs, rows=[])
    for run, (_, results, notes) in zip(runs, read):
        table.notes += notes
        if not results:
            table.notes.append(f"{run.run_dir}: no finished suite (no <suite>/results.json marked complete); left out")
            continue
        table.suites[run.label] = list(results)
        for suite, data in results.items():
            rows = suite_rows(run, suite, data)
            table.rows += rows
            table.notes += [note for note in _nonfinite_note(Path(run.run_dir) / suite / "results.json", rows)
                            if note not in table.notes]  # a run given twice: said once
    if not table.rows:
        finished = sorted({suite for suites in table.suites.values() for suite in suites})
        if finished:
            raise RunDirectoryError(f"the finished suites ({', '.join(finished)}) hold no number compare can read: "
                                    "write numbers, short lists of numbers or estimates at the top level of "
                                    "results.json (or one level below)")
        raise RunDirectoryError(f"no finished suite in {', '.join(map(str, run_dirs))}: run `geomprobe run --suite "
                                "geometry --out RUN_DIR` (or any suite) first")
    return table


def value_of(rows: list[dict], run: str, suite: str, statistic: str) -> dict | None:
    """The row of one run's statistic (None when the table has none)."""
    return next((r for r in rows if r["run"] == run and r["suite"] == suite and r["statistic"] == statistic), None)


def _cell(value):
    if value is None:
        return ""
    return repr(value) if isinstance(value, float) else str(value)


def write_tidy(table: Aggregate, out: str | Path, basis: dict | None = None) -> list[Path]:
    """OUT.csv and OUT.json (and OUT.parquet when pyarrow is importable); returns the paths written.
    A NaN or infinite number is written as results.json holds it: nan / inf / -inf in the CSV,
    NaN / Infinity / -Infinity in the JSON (Python's json reads them), NaN / inf in parquet."""
    out = Path(out)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(TIDY_COLUMNS)
    for row in table.rows:
        writer.writerow([_cell(row.get(column)) for column in TIDY_COLUMNS])
    written = [out.with_suffix(".csv"), out.with_suffix(".json")]
    atomic_write_text(written[0], buffer.getvalue())
    payload = {"layout": "tidy", "columns": list(TIDY_COLUMNS), "runs": [asdict(run) for run in table.runs],
               "suites": table.suites, "notes": table.notes,
               "rows": [{column: row.get(column) for column in TIDY_COLUMNS} for row in table.rows]}
    if basis is not None:
        payload["cross_model_basis"] = basis
    atomic_write_json(written[1], payload)
    try:
        import pyarrow  # noqa: F401
        import pyarrow.parquet as pq
    except ImportError:
        return written
    import pyarrow as pa

    columns = {column: [row.get(column) for row in table.rows] for column in TIDY_COLUMNS}
    types = {"step": pa.int64(), "n": pa.int64(), "value": pa.float64(), "ci_low": pa.float64(),
             "ci_high": pa.float64(), "p_value": pa.float64(), "untrained_null_mean": pa.float64(),
             "diff_vs_untrained": pa.float64(), "diff_ci_low": pa.float64(), "diff_ci_high": pa.float64()}
    arrays = {column: pa.array([None if v is None else float(v) for v in values] if types.get(column) == pa.float64()
                               else values, type=types.get(column, pa.string()))
              for column, values in columns.items()}
    sink = io.BytesIO()
    pq.write_table(pa.table(arrays), sink)
    atomic_write_bytes(out.with_suffix(".parquet"), sink.getvalue())
    return written + [out.with_suffix(".parquet")]


# the compact summary: one row per run (the console, and the report's cross-run table); its columns
# are the suites' headlines declared with summary=True (summary_columns)
# against untrained copies, in the project's one vocabulary (null_comparison.short_words): the
# console summary (STATUS_MARK) and the report's cross-run table (STATUS_WORD) say the same words
STATUS_WORD = {"above untrained": "better", "below untrained": "worse", "indistinguishable from untrained":
               "indistinguishable"}
STATUS_MARK = STATUS_WORD


def summary_cell(rows: list[dict], run: str, suite: str, statistic: str, with_ci: bool = False,
                 marks: dict = STATUS_MARK, spec: str = ".3g") -> str:
    """'0.254 indistinguishable' (with_ci: '0.254 [0.199, 0.31] indistinguishable'), the word saying
    how it compares with untrained copies (better, worse, indistinguishable); 'partial (2/3)' for a verdict; '' when absent.
    'delta_mae_bits[*]' is the ablation headline condition's."""
    if statistic.endswith("[*]"):
        head = value_of(rows, run, suite, "headline_condition")
        if head is None:
            return ""
        statistic = statistic[:-3] + f"[{head['text']}]"
    row = value_of(rows, run, suite, statistic)
    if row is None:
        return ""
    if row["text"] and statistic == "verdict":
        return f"{row['text']} ({row['value']}/{row['n']})"
    text = "n/a" if row["value"] is None else format(row["value"], spec)
    if with_ci and row["ci_low"] is not None:
        text += f" [{format(row['ci_low'], spec)}, {format(row['ci_high'], spec)}]"
    if row["status_vs_untrained"] in marks:
        text += f" {marks[row['status_vs_untrained']]}"
    return text


PLUGIN_COLUMNS = 4  # summary columns per suite without a reader of its own: its first statistics


def plugin_columns(rows: list[dict]) -> list[tuple[str, str, str]]:
    """(suite, statistic, header) for the first PLUGIN_COLUMNS statistics of each suite compare has
    no reader for (a plug-in's declared numbers, read by generic_reader)."""
    known = set(suite_readers()) | {suite for suite, _, _ in summary_columns()}
    columns: list[tuple[str, str, str]] = []
    for row in rows:
        suite, statistic = row["suite"], row["statistic"]
        if suite in known or (suite, statistic, f"{suite} {statistic}") in columns:
            continue
        if sum(c[0] == suite for c in columns) < PLUGIN_COLUMNS:
            columns.append((suite, statistic, f"{suite} {statistic}"))
    return columns


TRANSPOSED_RUNS = 4  # up to this many runs, the console summary has a row per statistic and a column per run


def print_summary(table: Aggregate) -> None:
    from rich.table import Table

    present = [(s, k, h) for s, k, h in summary_columns()
               if any(summary_cell(table.rows, run.label, s, k) for run in table.runs)]
    present += plugin_columns(table.rows)
    summary = Table(title=f"{len(table.rows)} rows (run x suite x statistic) over {len(table.suites)} run"
                          f"{'s' if len(table.suites) != 1 else ''}",
                    caption="against untrained copies: better, worse or indistinguishable (better is the favourable "
                            "side: lower for a lower-is-better statistic such as keys |cos| or SULA MAE)")
    shown = [run for run in table.runs if run.label in table.suites]
    if len(shown) <= TRANSPOSED_RUNS:  # few runs: a row per statistic, a column per run (words fit whole)
        summary.add_column("statistic", no_wrap=True)
        for run in shown:
            summary.add_column(run.label if run.step is None else f"{run.label} (step {run.step})")
        for suite, statistic, header in present:
            summary.add_row(header, *(summary_cell(table.rows, run.label, suite, statistic) or "-" for run in shown))
        _print_summary(table, summary)
        return
    steps = any(run.step is not None for run in table.runs)
    summary.add_column("run", no_wrap=True)
    if steps:
        summary.add_column("step", justify="right", min_width=4)
    for _, _, header in present:
        summary.add_column(header)
    for run in table.runs:
        if run.label not in table.suites:
            continue
        step = ["-" if run.step is None else str(run.step)] if steps else []
        summary.add_row(run.label, *step, *(summary_cell(table.rows, run.label, s, k) or "-" for s, k, _ in present))
    _print_summary(table, summary)


def _print_summary(table: Aggregate, summary) -> None:
    console = table_console()
    console.print(summary)
    console.print("suites: " + "; ".join(f"{label} {', '.join(suites)}" for label, suites in table.suites.items()),
                  markup=False, highlight=False)
    for note in table.notes:
        console.print(f"note: {note}", markup=False, highlight=False)
