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

This module is the machinery; a suite's rows live with the suite. Each built-in suite folder's
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
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from geomprobe.console import table_console
from geomprobe.errors import ConfigError, RunDirectoryError
from geomprobe.rundir import atomic_write_bytes, atomic_write_json, atomic_write_text

# Paper III (METHODS.md sections 2, 4): value manifold PC1+PC2 (mixed / mathematics-only) and
# attention focusing. Keys: substrings of a hub id.
PAPER_III = {
    "pythia-410m": {"pc12_mixed": "99.7%", "pc12_math": "99.9%", "focusing": "82%"},
    "phi-2": {"pc12_mixed": "60.6%", "pc12_math": "63.5%", "focusing": "86%"},
    "llama-3.2-1b": {"pc12_mixed": "51.4%", "pc12_math": "73.6%", "focusing": "31%"},
    "mistral-7b": {"pc12_mixed": "15-20%", "pc12_math": "~80%", "focusing": "20-30% (non-monotone)"},
}

EARLY_FRACTION = 1 / 3  # "early layers": the first third of the depth, at least one layer
LAYOUTS = ("tidy", "table2")
SUITE_ORDER = ("extract", "geometry", "domain", "sula", "ablation", "mechanisms")
TIDY_COLUMNS = ("run", "model", "revision", "step", "suite", "statistic", "value", "text", "ci_low", "ci_high",
                "method", "n", "p_value", "untrained_null_mean", "diff_vs_untrained", "diff_ci_low", "diff_ci_high",
                "status_vs_untrained", "run_dir", "commit")
DEFAULT_REVISION = "main"
_STEP = re.compile(r"^step[-_]?(\d+)$", re.IGNORECASE)


def paper_reference(model: str) -> dict | None:
    lowered = model.lower()
    for key, values in PAPER_III.items():
        if key in lowered:
            return values
    return None


def _read(path: Path) -> dict | None:
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        why = (str(error).splitlines() or ["empty"])[0]
        raise RunDirectoryError(f"{path} is damaged (not readable JSON: {why}): rerun `geomprobe run --suite "
                                f"{path.parent.name} --out {path.parent.parent}` with the same --model to write it "
                                "again") from None
    return data if isinstance(data, dict) else None


# --------------------------------------------------------------------------------------------
# which run is which: model@revision, training step


def parse_step(revision) -> int | None:
    """The training step of a checkpoint revision: 'step1000', 'step-1000', 'step_0001000' -> 1000;
    anything else (main, a commit, None) -> None."""
    match = _STEP.match(str(revision).strip()) if revision is not None else None
    return int(match.group(1)) if match else None


@dataclass(frozen=True)
class RunIdentity:
    """A run directory as the tables and the report name it."""
    run_dir: str
    label: str  # model@revision, unique among the runs compared (the run directory's name added to duplicates)
    model: str  # the model spec without its revision (a local directory: its name)
    revision: str  # manifest model.revision (or the spec's @revision); "main" when there is none
    step: int | None  # from the revision, or the final step of a wind-tunnel training run
    spec: str | None = None  # the model spec as given
    commit: str | None = None  # the hub commit the revision resolved to
    source: str | None = None  # hub id or local directory the weights came from
    step_source: str | None = None  # where the step was read: "revision" or the metrics.json path


def _looks_local(name: str, source: str | None) -> bool:
    if "/" not in name and "\\" not in name:
        return False
    path = Path(name).expanduser()
    return (path.is_absolute() or name.startswith((".", "~")) or path.is_dir()
            or (source is not None and Path(source).is_dir() and Path(source).name == path.name))


def _final_step(directories: list[Path]) -> tuple[int | None, str | None]:
    """steps of the first metrics.json (a `windtunnel train` output) among the directories."""
    for directory in directories:
        metrics = directory / "metrics.json"
        if not metrics.is_file():
            continue
        try:
            steps = json.loads(metrics.read_text()).get("steps")
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(steps, int) and not isinstance(steps, bool):
            return steps, str(metrics)
    return None, None


def identify(run_dir: str | Path, manifest: dict | None = None) -> RunIdentity:
    """Model, revision and training step of one run directory, read from its manifest (label not
    yet made unique; `identities` does that)."""
    from geomprobe.models.registry import parse_model_spec

    run_dir = Path(run_dir)
    if manifest is None:
        try:
            manifest = _read(run_dir / "manifest.json")
        except RunDirectoryError:  # unreadable: named by its directory (the reader that needs it says why)
            manifest = None
    model = (manifest or {}).get("model") if isinstance((manifest or {}).get("model"), dict) else {}
    spec = model.get("spec") or model.get("source")
    source = model.get("source")
    if spec:
        name, spec_revision = parse_model_spec(str(spec))
    else:  # a `windtunnel train` output (no manifest): the directory is the model
        name, spec_revision = run_dir.resolve().name, None
    short = (Path(name).name or name) if _looks_local(name, source) else name
    revision = model.get("revision") or spec_revision
    step, step_source = parse_step(revision), "revision"
    if step is None:
        step_source = None
        if revision is None:  # the final model of a wind-tunnel training run is its last step
            candidates = [Path(source)] if source else []
            if spec and _looks_local(name, source):
                candidates.append(Path(name).expanduser())
            if not manifest:
                candidates.append(run_dir)
            step, step_source = _final_step([c for c in candidates if c.is_dir()])
    revision = str(revision) if revision else DEFAULT_REVISION
    return RunIdentity(run_dir=str(run_dir), label=f"{short}@{revision}", model=short, revision=revision, step=step,
                       spec=spec, commit=model.get("commit"), source=source, step_source=step_source)


def unique_labels(runs: list[RunIdentity]) -> list[RunIdentity]:
    """The same runs, labels made unique: a duplicated model@revision gets the run directory's name,
    then its parent's, then a number."""
    from dataclasses import replace

    labels = [run.label for run in runs]
    for depth in (1, 2):
        duplicated = {label for label in labels if labels.count(label) > 1}
        for i, run in enumerate(runs):
            if labels[i] in duplicated:
                path = Path(run.run_dir)
                where = path.name if depth == 1 else str(Path(path.parent.name) / path.name)
                labels[i] = f"{run.label} ({where})"
    seen: dict[str, int] = {}
    for i, label in enumerate(labels):
        if labels.count(label) > 1:
            seen[label] = seen.get(label, 0) + 1
            labels[i] = f"{label} #{seen[label]}"
    return [replace(run, label=label) for run, label in zip(runs, labels)]


def _family_and_size(model: str) -> tuple[str, float]:
    """('pythia-', 1.6e8) for pythia-160m; (model, inf) where the name gives no size."""
    size = re.search(r"(?<![A-Za-z0-9.])(\d+(?:\.\d+)?)([mMbB])(?![A-Za-z])", model)
    if not size:
        return model, math.inf
    return model[:size.start()] + model[size.end():], float(size[1]) * (1e6 if size[2] in "mM" else 1e9)


def ordered_runs(runs: list[RunIdentity]) -> list[int]:
    """The order compare shows runs in (indices into `runs`): model families as first given, each
    family by size (pythia-70m, -160m, -1b, -1.4b), each model by training step (the final weights,
    with no step, last), so a shell glob's alphabetical order (step-1500, step-16, step-378)
    becomes training order."""
    first: dict[str, int] = {}
    keys = []
    for index, run in enumerate(runs):
        family, params = _family_and_size(run.model)
        first.setdefault(family, index)
        keys.append((first[family], params, run.model, math.inf if run.step is None else run.step, index))
    return [key[-1] for key in sorted(keys)]


def identities(run_dirs: list[str | Path], manifests: list[dict | None] | None = None) -> list[RunIdentity]:
    manifests = manifests if manifests is not None else [None] * len(run_dirs)
    return unique_labels([identify(run_dir, manifest) for run_dir, manifest in zip(run_dirs, manifests)])


def finished_results(run_dir: str | Path) -> tuple[dict | None, dict[str, dict], list[str]]:
    """(manifest, suite -> results.json, notes) of a run directory's finished suites: those with a
    results.json whose manifest entry is complete (or has no entry)."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise RunDirectoryError(f"{run_dir} is not a directory: pass a run directory written by `geomprobe run`")
    manifest = _read(run_dir / "manifest.json")
    statuses = (manifest or {}).get("suites") or {}
    found = {path.parent.name: path for path in run_dir.glob("*/results.json")}
    order = sorted(found, key=lambda s: (SUITE_ORDER.index(s) if s in SUITE_ORDER else len(SUITE_ORDER), s))
    results, notes = {}, []
    for suite in order:
        entry = statuses.get(suite)
        status = entry.get("status") if isinstance(entry, dict) else None
        if entry is not None and status != "complete":
            notes.append(f"{run_dir}: {suite} suite left out (status {status or 'unknown'})")
            continue
        data = _read(found[suite])
        if data is not None:
            results[suite] = data
    return manifest, results, notes


# --------------------------------------------------------------------------------------------
# the tidy rows of one suite's results


def number(value):
    """A finite int or float as it is; anything else (bool, NaN, a string, None) -> None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value if math.isfinite(value) else None


def _ci(ci) -> tuple:
    if isinstance(ci, (list, tuple)) and len(ci) == 2:
        return number(ci[0]), number(ci[1])
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
        self.rows.append({"statistic": statistic, "value": number(value), "text": text or "", "ci_low": low,
                          "ci_high": high, "method": method or "", "n": n if isinstance(n, int) else None,
                          "p_value": number(p_value), "untrained_null_mean": None, "diff_vs_untrained": None,
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
        row.update(untrained_null_mean=number(comparison.get("null_mean")),
                   diff_vs_untrained=number(difference.get("value")), diff_ci_low=low, diff_ci_high=high,
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
        elif number(value) is not None:
            rows.add(key, value)
        elif isinstance(value, list) and 0 < len(value) <= GENERIC_LIST_MAX and \
                all(number(item) is not None for item in value):
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


def __getattr__(name: str):
    """SUITE_READERS and SUMMARY_COLUMNS as before: suite_readers() and summary_columns(), read when
    asked for (so after the faces are loaded)."""
    if name == "SUITE_READERS":
        return suite_readers()
    if name == "SUMMARY_COLUMNS":
        return summary_columns()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# (the side-by-side row's key, the definition in the statistic's brackets)
PAPER_CODE_DEFINITIONS = (("geomprobe", "geomprobe"), ("paper_code", "paper-code"), ("published", "published"))


def _slug(text: str) -> str:
    """'rho(PC1, H_bayes), values' -> 'rho_pc1_h_bayes_values'."""
    return re.sub(r"[^0-9a-z]+", "_", str(text).lower()).strip("_") or "row"


def paper_code_statistic(row: dict, definition: str, slug: str | None = None) -> str:
    """The tidy statistic of one side-by-side row under one definition (geomprobe, paper-code, published)."""
    return f"paper_code.{row.get('quantity')}.{slug or _slug(row.get('label') or '')}[{definition}]"


def _paper_code(r: dict, rows: Rows) -> None:
    """Three rows per side-by-side row of a suite run with --definitions paper-code (module docstring)."""
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
            table.rows += suite_rows(run, suite, data)
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
    """OUT.csv and OUT.json (and OUT.parquet when pyarrow is importable); returns the paths written."""
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
STATUS_MARK = {"above untrained": "^", "below untrained": "v", "indistinguishable from untrained": "="}
STATUS_WORD = {"above untrained": "above", "below untrained": "below", "indistinguishable from untrained": "same"}


def summary_cell(rows: list[dict], run: str, suite: str, statistic: str, with_ci: bool = False,
                 marks: dict = STATUS_MARK, spec: str = ".3g") -> str:
    """'0.254 =' (with_ci: '0.254 [0.199, 0.31] ='), the mark saying how it compares with untrained
    copies (^ above, v below, = indistinguishable); 'partial (2/3)' for a verdict; '' when absent.
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


def print_summary(table: Aggregate) -> None:
    from rich.table import Table

    present = [(s, k, h) for s, k, h in summary_columns()
               if any(summary_cell(table.rows, run.label, s, k) for run in table.runs)]
    present += plugin_columns(table.rows)
    summary = Table(title=f"{len(table.rows)} rows (run x suite x statistic) over {len(table.suites)} runs; against "
                          "untrained copies: ^ above, v below, = indistinguishable")
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
    console = table_console()
    console.print(summary)
    console.print("suites: " + "; ".join(f"{label} {', '.join(suites)}" for label, suites in table.suites.items()),
                  markup=False, highlight=False)
    for note in table.notes:
        console.print(f"note: {note}", markup=False, highlight=False)


# --------------------------------------------------------------------------------------------
# paper III's Table 2 layout (geometry and domain)


def row_for(run_dir: str | Path, label: str | None = None) -> dict:
    run_dir = Path(run_dir)
    manifest = _read(run_dir / "manifest.json")
    geometry = _read(run_dir / "geometry" / "results.json")
    if manifest is None or geometry is None:
        raise RunDirectoryError(f"{run_dir} has no finished geometry suite (geometry/results.json): run "
                                f"`geomprobe run --suite geometry --out {run_dir}` first, or use the tidy layout "
                                "(`geomprobe compare` without --layout table2), which reads every suite")
    domain = _read(run_dir / "domain" / "results.json")
    model = manifest["model"]
    shape = geometry.get("shape") or model.get("shape") or {}
    keys = geometry["key_orthogonality"]
    layer_means = keys["layer_mean"]
    n_early = max(1, math.ceil(len(layer_means) * EARLY_FRACTION))
    row = {
        "run": str(run_dir),
        "label": label or identify(run_dir, manifest).label,
        "model": model.get("spec") or model.get("source"),
        "source": model.get("source"),
        "architecture": model.get("family"),
        "shape": shape,
        "pc12_mixed": geometry["value_manifold"]["pc12"],
        "pc12_mixed_ci95": geometry["value_manifold"]["pc12_ci95"],
        "pc12_restricted": None,
        "keys_early_mean_abs_cos": sum(layer_means[:n_early]) / n_early,
        "keys_early_layers": list(range(n_early)),
        "keys_fraction_below": keys["fraction_below"],
        "keys_analytic_gaussian": keys["analytic_gaussian"],
        "focusing": geometry["attention_focusing"]["focusing"],
        "verdict": geometry["verdict"]["label"],
        "verdict_summary": geometry["verdict"]["summary"],
        "paper_iii": paper_reference(f"{model.get('spec')} {model.get('source')}"),
    }
    if domain is not None:
        row["pc12_restricted"] = {label: entry["pc12"] for label, entry in domain["sets"].items() if label != "mixed"}
        row["pc12_mixed_domain_suite"] = domain["sets"]["mixed"]["pc12"]
    return row


def shared_basis(run_dirs: list[str | Path], readout: str = "values") -> dict:
    """One PCA over several models' last-layer vectors for the prompts their geometry suites share
    (METHODS.md section 2.7): each model standardised separately, columns concatenated."""

    from geomprobe.analysis.value_manifold import cross_model_basis
    from geomprobe.extraction import load_extraction

    extractions = {}
    for run_dir in run_dirs:
        path = Path(run_dir) / "geometry" / "extraction"
        if not (path / "meta.json").exists():
            raise RunDirectoryError(f"{run_dir} has no finished geometry extraction ({path})")
        extractions[str(run_dir)] = load_extraction(path)
    shared = set.intersection(*(set(e.prompt_ids) for e in extractions.values()))
    if len(shared) < 3:
        raise RunDirectoryError(f"the runs share {len(shared)} prompts; a cross-model basis needs at least 3: run "
                                "their geometry suites with the same --prompts and --n-per-quintile 0")
    order = sorted(shared)
    matrices, entropy = {}, None
    for name, extraction in extractions.items():
        rows = [extraction.prompt_ids.index(i) for i in order]
        if readout not in extraction.arrays:
            raise RunDirectoryError(f"{name}: readout '{readout}' was not extracted")
        matrices[name] = extraction[readout][rows, -1].reshape(len(rows), -1)
        if entropy is None and "next_entropy_bits" in extraction.arrays:
            entropy = extraction["next_entropy_bits"][rows]
    basis = cross_model_basis(matrices, entropy_bits=entropy)
    return {"n_shared_prompts": len(order), "prompt_ids": order, "readout": readout, **basis.to_dict()}


def _pct(value) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def markdown_table(rows: list[dict]) -> str:
    header = ("| run | architecture | value manifold PC1+PC2 mixed | restricted | keys early layers mean abs cos "
              "(Gaussian) | attention focusing | verdict | paper III (mixed / math / focusing) |")
    lines = [header, "|" + "---|" * 8]
    for row in rows:
        restricted = ("-" if not row["pc12_restricted"] else
                      ", ".join(f"{k} {_pct(v)}" for k, v in row["pc12_restricted"].items()))
        paper = row["paper_iii"]
        paper_text = "-" if paper is None else f"{paper['pc12_mixed']} / {paper['pc12_math']} / {paper['focusing']}"
        lines.append(f"| {row.get('label') or row['model']} | {row['architecture']} | {_pct(row['pc12_mixed'])} | "
                     f"{restricted} | {row['keys_early_mean_abs_cos']:.3f} ({row['keys_analytic_gaussian']:.3f}) | "
                     f"{_pct(row['focusing'])} | {row['verdict']} | {paper_text} |")
    return "\n".join(lines) + "\n"


def table2(run_dirs: list[str | Path]) -> list[dict]:
    """Paper III's Table 2 rows, labelled by run (model@revision, unique among the runs)."""
    runs = identities(run_dirs)
    return [row_for(run_dir, run.label) for run_dir, run in zip(run_dirs, runs)]


def compare(run_dirs: list[str | Path], out: str | Path | None = None, basis: dict | None = None,
            layout: str = "table2") -> list[dict]:
    """Rows of the cross-run table. layout "table2" (this function's default, as before): paper III's
    Table 2 rows, with `out` also OUT.json and OUT.md (and `basis`, a `shared_basis(run_dirs)`
    result, in OUT.json). layout "tidy" (the CLI's default): the tidy rows of `aggregate`, with
    `out` also OUT.csv, OUT.json and OUT.parquet (pyarrow)."""
    if layout not in LAYOUTS:
        raise ConfigError(f"--layout must be one of {', '.join(LAYOUTS)}, got {layout!r}")
    if layout == "tidy":
        table = aggregate(run_dirs)
        if out is not None:
            write_tidy(table, out, basis)
        return table.rows
    rows = table2(run_dirs)
    if out is not None:
        out = Path(out)
        payload = {"rows": rows, "early_layers": "first third of the depth"}
        if basis is not None:
            payload["cross_model_basis"] = basis
        atomic_write_json(out.with_suffix(".json"), payload)
        atomic_write_text(out.with_suffix(".md"), markdown_table(rows))
    return rows


def print_table(rows: list[dict]) -> None:
    from rich.table import Table

    table = Table(title="cross-model geometry (paper III Table 2 layout)")
    for column in ("run", "arch", "PC1+PC2 mixed", "restricted", "keys early |cos| (Gauss)", "focusing",
                   "verdict", "paper III mixed/math/focus"):
        table.add_column(column)
    for row in rows:
        restricted = ("-" if not row["pc12_restricted"] else
                      ", ".join(f"{k} {_pct(v)}" for k, v in row["pc12_restricted"].items()))
        paper = row["paper_iii"]
        table.add_row(row.get("label") or row["model"], row["architecture"] or "-", _pct(row["pc12_mixed"]),
                      restricted, f"{row['keys_early_mean_abs_cos']:.3f} ({row['keys_analytic_gaussian']:.3f})",
                      _pct(row["focusing"]), row["verdict"],
                      "-" if paper is None else f"{paper['pc12_mixed']} / {paper['pc12_math']} / {paper['focusing']}")
    table_console().print(table)
