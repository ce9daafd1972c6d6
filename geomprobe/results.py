"""Reading run directories, and the results schema as one document.

Every <run>/<suite>/results.json is the TypedDict its suite registered: the built-in suites'
in geomprobe/suites/<name>/results.py, the shared types and the check in geomprobe.suites.schema.
The names are re-exported here (geomprobe.results.SulaResults, ...). RESULTS_SCHEMA.md in the
repository is generated from the types (`schema_markdown()`; a test keeps it current).

    from geomprobe import load_run
    run = load_run("runs/pythia-410m")
    run.results["sula"]["conditions"]["main"]["mae_bits"]["value"]
    frame = run.table("sula")                      # per-prompt rows as a pandas DataFrame
"""

from __future__ import annotations

import typing
from dataclasses import dataclass, field
from importlib import import_module
from pathlib import Path

from geomprobe.errors import RunDirectoryError
from geomprobe.suites import SUITES
from geomprobe.suites.reading import data_frame, schema_version_of  # noqa: F401 (re-exported)
from geomprobe.suites.schema import (  # noqa: F401
    HEADER,
    SCHEMA_VERSION,
    SHARED_NESTED,
    Header,
    NullComparison,
    PaperCodeRow,
    PaperCodeTable,
    PromptsUsed,
    UntrainedNull,
    _hints,
)
from geomprobe.suites.schema import check_results as _check_results
from geomprobe.suites.schema import schema_problems as _schema_problems


def __getattr__(name: str):
    """The suites' results types as names of this module (geomprobe.results.SulaResults, ...): each
    registered suite's schema and the TypedDicts of its results module, found through the registry,
    so this module names no suite."""
    for spec in list(SUITES.values()):
        if spec.schema is None:
            continue
        value = getattr(import_module(spec.schema.__module__), name, None)
        if isinstance(value, type) and typing.is_typeddict(value):
            return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def schema_of(suite: str) -> type | None:
    """The results TypedDict a registered suite declared (None: only its header is checked)."""
    spec = SUITES.get(suite)
    return None if spec is None else spec.schema


def schema_problems(suite: str, data: dict) -> list[str]:
    """What in `data` does not match the registered suite's results type (empty when it matches)."""
    return _schema_problems(suite, data, schema_of(suite))


def check_results(suite: str, data: dict) -> None:
    """Raise TypeError when a suite's results do not match its registered type (a bug, not a user error)."""
    _check_results(suite, data, schema_of(suite))


def with_header(suite: str, model: str, results: dict) -> dict:
    """The results with the header the registered suite writes first."""
    from geomprobe.suites.schema import with_header as header

    return header(suite, model, results, schema_version_of(suite))


def schemas() -> dict[str, type]:
    """suite -> its results TypedDict, for every registered suite that declared one, in run order."""
    return {name: spec.schema for name, spec in SUITES.items() if spec.schema is not None}


def register_schema(suite: str, schema: type, version: int | None = None) -> None:
    """Give a registered suite a results type after the fact (register_suite(..., schema=) is the
    usual way); without one, only the header is checked."""
    from dataclasses import replace

    if suite not in SUITES:
        raise KeyError(f"register_schema: no suite named {suite!r} is registered")
    SUITES[suite] = replace(SUITES[suite], schema=schema,
                            schema_version=SUITES[suite].schema_version if version is None else version)


def _nested_of(schema: type) -> tuple:
    return tuple(getattr(import_module(schema.__module__), "NESTED", ()))


def schema_markdown() -> str:
    """RESULTS_SCHEMA.md: every registered suite's results type, then the nested types."""
    lines = ["# Results schema", "",
             "Generated from each suite's results type (`geomprobe/suites/<suite>/results.py`, the shared types in "
             "`geomprobe/suites/schema.py`) by `geomprobe.results.schema_markdown()`; a test keeps this "
             "file current. Every `<run>/<suite>/results.json` is one of these objects.", "",
             "An *estimate* is always `{value, ci95, method, n}` (`geomprobe.analysis.estimate.Estimate`): "
             "`value` the point estimate (null when undefined), `ci95` `[low, high]`, `method` how both were "
             "made, `n` the units behind it; `pvalue` and `note` may follow.", ""]
    table = schemas()
    nested = list(SHARED_NESTED)
    for schema in table.values():
        nested += [n for n in _nested_of(schema) if n not in nested]
    comments = _field_comments([*table.values(), *nested])
    for suite, schema in table.items():
        lines += [f"## {suite}: `{schema.__name__}` (schema version {schema_version_of(suite)})", "",
                  "| key | type | required | meaning |", "|---|---|---|---|"]
        lines += _rows(schema, comments)
        lines.append("")
    for schema in nested:
        lines += [f"### `{schema.__name__}`", "", "| key | type | required | meaning |", "|---|---|---|---|"]
        lines += _rows(schema, comments)
        lines.append("")
    return "\n".join(lines)


def _rows(schema: type, comments: dict) -> list[str]:
    return [f"| `{key}` | `{_cell(_type_name(hint))}` | {'yes' if key in schema.__required_keys__ else 'no'} | "
            f"{_cell(comments.get((schema, key), ''))} |" for key, hint in _hints(schema).items()]


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _type_name(hint) -> str:
    origin = typing.get_origin(hint)
    if origin in (typing.Required, typing.NotRequired):
        return _type_name(typing.get_args(hint)[0])
    if origin in (typing.Union, __import__("types").UnionType):
        return " | ".join(_type_name(a) for a in typing.get_args(hint))
    if hint is type(None):
        return "null"
    if origin is not None:
        return f"{origin.__name__}[{', '.join(_type_name(a) for a in typing.get_args(hint))}]"
    return getattr(hint, "__name__", str(hint))


def _field_comments(types: list[type]) -> dict:
    """(class, key) -> the comment written after the field in its module's source (inherited
    through the TypedDict bases, which may live in another module)."""
    import inspect
    import re

    modules = {import_module(t.__module__) for t in types}
    classes = {}
    for module in modules:
        classes.update({name: obj for name, obj in vars(module).items()
                        if isinstance(obj, type) and typing.is_typeddict(obj)})
    modules |= {import_module(c.__module__) for c in classes.values()}
    out, bases = {}, {}
    for module in sorted(modules, key=lambda m: m.__name__):
        current = None
        for line in inspect.getsource(module).splitlines():
            match = re.match(r"class (\w+)\(([^)]*)\)", line)
            if match:
                current = classes.get(match.group(1))
                bases[current] = [classes[b.strip()] for b in match.group(2).split(",") if b.strip() in classes]
                continue
            match = re.match(r"    (\w+): [^#]+#\s*(.*)$", line)
            if current is not None and match:
                out[(current, match.group(1))] = match.group(2).strip()

    def inherit(schema, key):
        if (schema, key) in out:
            return out[(schema, key)]
        for base in bases.get(schema, []):
            text = inherit(base, key)
            if text:
                return text
        return ""

    return {(schema, key): inherit(schema, key) for schema in classes.values() for key in _hints(schema)}


# ----------------------------------------------------------------------------------------------
# reading a run directory


REPR_MAX = 600  # characters of a Run's repr, at most
_STATUS_COLOUR = {"complete": "#1a7f37", "failed": "#cf222e", "interrupted": "#bf8700", "running": "#bf8700",
                  "skipped": "#6e7781"}


def _figure_text(figure: dict, ci: bool = False) -> str:
    """'next-token entropy 8.03 bits', 'verdict partial (2/3)', 'PC1+PC2 0.95 (worse than untrained)'."""
    if figure.get("unit") == "verdict" and figure.get("text"):
        return f"{figure['header']} {figure['text']} ({figure['value']}/{figure['n']})"
    value = figure.get("value")
    text = f"{figure['header']} {'n/a' if value is None else format(value, '.3g')}"
    if ci and figure.get("ci95") is not None:
        text += f" [{format(figure['ci95'][0], '.3g')}, {format(figure['ci95'][1], '.3g')}]"
    if figure.get("unit") == "bits":
        text += " bits"
    if figure.get("vs_untrained") in ("above untrained", "below untrained", "indistinguishable from untrained"):
        from geomprobe.analysis.null_comparison import status_words

        text += f" ({status_words(figure['vs_untrained'])})"
    return text


def _one_line(text) -> str:
    return " ".join(str(text).split())


def _short(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 3].rstrip() + "..."


@dataclass(repr=False)
class Run:
    """A run directory as written by geomprobe.run (which returns one): its manifest and every
    suite's results.

    Its repr is a few lines (model, each suite's status and headline figures), in Jupyter a card
    (_repr_html_); summary() is the same as JSON-ready values (what `geomprobe run --json` prints).
    A Run stands for its directory where a path is expected (os.PathLike: open(), Path(run),
    load_extraction(run / "extraction"), str(run.path)), as run()'s return value did when it was
    a pathlib.Path."""

    path: Path
    manifest: dict
    results: dict[str, dict] = field(default_factory=dict)  # suite -> results.json (typed as its suite's schema)
    notes: list[str] = field(default_factory=list)

    def __fspath__(self) -> str:
        return str(self.path)

    def __str__(self) -> str:  # the directory, as str(path) was; repr(run) is the summary
        return str(self.path)

    def __truediv__(self, other) -> Path:
        """run / "geometry" / "results.json": a path inside the run directory."""
        return self.path / other

    @property
    def suites(self) -> list[str]:
        """The suites whose results this run holds, in run order."""
        return list(self.results)

    def status(self, suite: str) -> str | None:
        """The manifest's status of one suite (complete, failed, interrupted, skipped, running), or None
        when the manifest has no entry for it."""
        entry = (self.manifest.get("suites") or {}).get(suite)
        return entry.get("status") if isinstance(entry, dict) else None

    @property
    def model(self) -> str:
        """The model spec the run was made with (manifest model.spec)."""
        model = self.manifest.get("model")
        spec = model.get("spec") or model.get("source") if isinstance(model, dict) else model
        return str(spec or (self.manifest.get("config") or {}).get("model") or "unknown model")

    def statuses(self) -> dict[str, str]:
        """suite -> its status in the manifest (complete, failed, interrupted, skipped, running), in
        run order; a suite with a results.json but no manifest entry is 'unknown'."""
        entries = self.manifest.get("suites") or {}
        out = {name: str(entry.get("status") or "unknown") for name, entry in entries.items() if isinstance(entry, dict)}
        out.update({suite: "unknown" for suite in self.results if suite not in out})
        return out

    def headlines(self, suite: str) -> list[dict]:
        """The headline figures of one suite's results, as its compare face declares them
        (geomprobe.compare.Headline; a plug-in suite: its first numbers): statistic, header, value,
        ci95, unit, n, text, vs_untrained, untrained_mean. [] when the suite has no results or nothing to read."""
        data = self.results.get(suite)
        if not isinstance(data, dict):
            return []
        from geomprobe import compare

        try:
            identity = compare.identify(self.path, self.manifest)
            rows = compare.suite_rows(identity, suite, data)
            declared = [(h.statistic, h.header, h.unit) for s, h in compare.headlines() if s == suite]
            if not declared:
                declared = [(k, k, "") for _, k, _ in compare.plugin_columns(rows)]
        except Exception:  # noqa: BLE001 - a results file geomprobe cannot read still shows its status
            return []
        figures = []
        for statistic, header, unit in declared:
            if statistic.endswith("[*]"):
                head = compare.value_of(rows, identity.label, suite, "headline_condition")
                statistic = statistic[:-3] + f"[{head['text']}]" if head is not None else statistic
            row = compare.value_of(rows, identity.label, suite, statistic)
            if row is None or (row["value"] is None and not row["text"]):
                continue
            ci = [row["ci_low"], row["ci_high"]] if row["ci_low"] is not None else None
            figures.append({"statistic": statistic, "header": header, "value": row["value"], "ci95": ci, "unit": unit,
                            "n": row["n"], "text": row["text"], "vs_untrained": row["status_vs_untrained"] or None,
                            "untrained_mean": row.get("untrained_null_mean")})
        return figures

    def verdict(self) -> dict | None:
        """The geometry suite's verdict (label, n_met, n_criteria, summary), None without one."""
        verdict = (self.results.get("geometry") or {}).get("verdict")
        return verdict if isinstance(verdict, dict) and verdict.get("label") else None

    def evidence(self) -> dict:
        """geomprobe's evidence of inference for this run (geomprobe.analysis.verdict.evidence_of_inference):
        state "evidence" | "none" | "not tested", the comparisons counted and those better than untrained."""
        from geomprobe.analysis.verdict import evidence_of_inference

        return evidence_of_inference(self.results)

    def summary(self) -> dict:
        """The run as JSON-ready values: run_dir, model, status, per suite its status, results.json
        path, why it was skipped or the error it failed with, and headline figures; the verdict; the
        evidence of inference; notes."""
        entries = self.manifest.get("suites") or {}
        suites = {}
        for name, status in self.statuses().items():
            entry = entries.get(name) if isinstance(entries.get(name), dict) else {}
            path = self.path / name / "results.json"
            suites[name] = {"status": status, "results": str(path) if name in self.results else None,
                            **{key: entry[key] for key in ("why", "error") if entry.get(key)},
                            "headlines": self.headlines(name)}
        verdict = self.verdict()
        return {"run_dir": str(self.path), "model": self.model, "status": self.manifest.get("status"),
                "suites": suites, "verdict": None if verdict is None else
                {key: verdict.get(key) for key in ("label", "n_met", "n_criteria", "summary")},
                "evidence": {key: value for key, value in self.evidence().items() if key != "left_out"},
                "notes": list(self.notes)}

    def document(self) -> dict:
        """The whole run as one JSON-ready document, what RUN/run.json holds (written after every
        suite): the manifest's provenance (config, fingerprint, versions, commit, model identity,
        backend, dtype, seed, command), the verdict and evidence, and per suite its status, options,
        prompts, start, end and seconds, headline figures and its whole results.json."""
        entries = self.manifest.get("suites") or {}
        summary = self.summary()
        suites = {}
        for name, entry in summary["suites"].items():
            recorded = entries.get(name) if isinstance(entries.get(name), dict) else {}
            suites[name] = {**entry, **{key: recorded.get(key) for key in ("options", "prompts", "started", "ended")},
                            "seconds": _seconds(recorded.get("started"), recorded.get("ended")),
                            "results": self.results.get(name)}
        provenance = ("created", "started", "ended", "command", "config", "fingerprint", "versions",
                      "geomprobe_commit", "model", "backend", "dtype", "seed")
        return {"document": "geomprobe run", "schema_version": RUN_DOCUMENT_SCHEMA, "run_dir": str(self.path),
                "status": self.manifest.get("status"), **{key: self.manifest.get(key) for key in provenance},
                "verdict": summary["verdict"], "evidence": summary["evidence"], "suites": suites,
                "notes": list(self.notes)}

    def _suite_line(self, suite: str, status: str, width: int) -> str:
        entry = (self.manifest.get("suites") or {}).get(suite) or {}
        detail = entry.get("why") or entry.get("error") if status in ("skipped", "failed", "interrupted") else None
        figures = sorted(self.headlines(suite), key=lambda f: f["unit"] != "verdict")[:3]  # the verdict first
        detail = _one_line(detail or ", ".join(_figure_text(f) for f in figures))
        return _short(f"  {suite:<10} {status:<9} {detail}".rstrip(), width)

    def __repr__(self) -> str:
        statuses = list(self.statuses().items())
        shown = statuses[:6]
        width = 100 if len(shown) <= 4 else 72
        lines = [_short(_one_line(f"Run {self.path} ({self.model}; {self.manifest.get('status') or 'no status'})"), 100)]
        lines += [self._suite_line(suite, status, width) for suite, status in shown]
        if len(statuses) > len(shown):
            lines.append(f"  ... and {len(statuses) - len(shown)} more suites: .statuses()")
        if not statuses:
            lines.append("  no suites yet")
        if self.notes:
            lines.append(_short(f"  {len(self.notes)} note{'s' if len(self.notes) > 1 else ''}: "
                                f"{_one_line(self.notes[0])}", 90))
        lines.append("  .results[suite], .table(suite), .frame(), .figures(), .summary()")
        text = "\n".join(lines)
        return text if len(text) <= REPR_MAX else text[:REPR_MAX - 3] + "..."

    def _repr_html_(self) -> str:
        """A verdict card: the model, each suite's status and headline figures, the verdict."""
        from html import escape

        status = self.manifest.get("status") or "no status"
        rows = []
        for suite, state in self.statuses().items():
            entry = (self.manifest.get("suites") or {}).get(suite) or {}
            detail = entry.get("why") or entry.get("error") if state in ("skipped", "failed", "interrupted") else None
            figures = detail or "; ".join(_figure_text(f, ci=True) for f in self.headlines(suite)) or "-"
            colour = _STATUS_COLOUR.get(state, "#6e7781")
            rows.append(f"<tr><td style='padding:2px 10px 2px 0'><b>{escape(suite)}</b></td>"
                        f"<td style='padding:2px 10px 2px 0;color:{colour}'>{escape(state)}</td>"
                        f"<td style='padding:2px 0'>{escape(_short(_one_line(figures), 400))}</td></tr>")
        verdict = self.verdict()
        verdict_html = "" if verdict is None else (
            f"<div style='margin:6px 0'>verdict: <b>{escape(str(verdict.get('label')))}</b> "
            f"({escape(str(verdict.get('n_met')))}/{escape(str(verdict.get('n_criteria')))}) "
            f"<span style='color:#57606a'>{escape(_short(_one_line(verdict.get('summary') or ''), 400))}</span></div>")
        evidence = self.evidence()
        if evidence["state"] != "not tested" or verdict is not None:
            verdict_html += (f"<div style='margin:6px 0'>{escape(evidence['words'])}"
                             + (f": {escape(', '.join(evidence['better_than_untrained']))} better than untrained"
                                if evidence["better_than_untrained"] else "") + "</div>")
        notes = "".join(f"<div style='color:#9a6700'>note: {escape(note)}</div>" for note in self.notes)
        return (f"<div style='border:1px solid #d0d7de;border-radius:6px;padding:8px 12px;max-width:820px;"
                f"font-family:sans-serif;font-size:13px'>"
                f"<div><b>geomprobe run</b> <code>{escape(str(self.path))}</code></div>"
                f"<div>model <b>{escape(self.model)}</b>, status <b style='color:"
                f"{_STATUS_COLOUR.get(status, '#6e7781')}'>{escape(status)}</b></div>{verdict_html}"
                f"<table style='border-collapse:collapse;margin-top:4px'><tr><th align=left>suite</th>"
                f"<th align=left>status</th><th align=left>key figures</th></tr>{''.join(rows)}</table>{notes}</div>")

    def rows(self, suite: str, condition: str | None = None) -> list[dict]:
        """Per-prompt rows of a suite (one dict per prompt), from the suite's rows face
        (geomprobe/suites/<name>/rows.py, register_rows): sula and ablation per condition (all
        conditions, with a `condition` column, when None); extract and geometry from their
        extraction arrays (prompt id, next-token entropy, length, head-mean attention entropy per
        layer)."""
        readers = row_readers()
        if suite not in readers:
            listed = ", ".join(readers[:-1]) + " and " + readers[-1] if len(readers) > 1 else "".join(readers)
            raise RunDirectoryError(f"no per-prompt table for the {suite} suite: tables exist for {listed}")
        return ROW_READERS[suite](self, condition)

    def table(self, suite: str, condition: str | None = None):
        """rows(suite, condition) as a pandas DataFrame (pandas is optional: `pip install pandas`)."""
        return data_frame(self.rows(suite, condition), "Run.table")

    def frame(self):
        """This run's tidy table as a pandas DataFrame: one row per suite x statistic, with its value,
        95% CI, n and how it compares with the untrained copies (what `geomprobe compare RUN
        --layout tidy` writes; geomprobe.compare.aggregate)."""
        from geomprobe.compare import aggregate

        return data_frame(aggregate([self.path]).rows, "Run.frame")

    def figures(self, section: str | None = None) -> dict:
        """The report's figures for this run, {title: plotly Figure} in page order (geomprobe.plot.figures;
        `section` keeps one section). Each figure's caption is in fig.layout.meta["caption"]."""
        from geomprobe.plot import figures

        return figures(self, section)


RUN_DOCUMENT = "run.json"  # the run as one document, beside manifest.json and the suites' folders
RUN_DOCUMENT_SCHEMA = 1


def _seconds(started, ended) -> float | None:
    from datetime import datetime

    try:
        return round((datetime.fromisoformat(ended) - datetime.fromisoformat(started)).total_seconds(), 3)
    except (TypeError, ValueError):
        return None


def write_run_document(path: str | Path) -> Path:
    """Write RUN/run.json (Run.document()) from what the run directory holds now; its path."""
    from geomprobe.rundir import atomic_write_json

    run = load_run(path)
    atomic_write_json(run.path / RUN_DOCUMENT, run.document())
    return run.path / RUN_DOCUMENT




# ----------------------------------------------------------------------------------------------
# per-prompt rows: each suite's rows face registers its reader

ROW_READERS: dict[str, typing.Callable] = {}


def register_rows(suite: str, reader) -> None:
    """Give `suite` per-prompt rows: reader(run, condition) -> list of dicts (Run.rows, Run.table).
    A suite with a reader already is a ValueError."""
    if suite in ROW_READERS:
        raise ValueError(f"register_rows: the {suite!r} suite already has a rows reader")
    ROW_READERS[suite] = reader


def row_readers() -> list[str]:
    """The suites with per-prompt rows, after each suite folder's rows face is loaded, in registry order."""
    from geomprobe.suites.base import load_faces

    load_faces("rows")
    order = {name: rank for rank, name in enumerate(SUITES)}
    return sorted(ROW_READERS, key=lambda name: order.get(name, len(order)))


def extraction_rows(directory: Path) -> list[dict]:
    """Per-prompt rows of a finished extraction: prompt id, length in tokens, next-token entropy,
    head-mean attention entropy per layer."""
    from geomprobe.extraction import load_extraction

    if not (directory / "meta.json").exists():
        raise RunDirectoryError(f"{directory} holds no finished extraction")
    extraction = load_extraction(directory)
    head_mean = extraction["attn_entropy_bits"].mean(axis=2)
    rows = []
    for i, prompt_id in enumerate(extraction.prompt_ids):
        row = {"id": prompt_id, "n_tokens": int(extraction["n_tokens"][i])}
        if "next_entropy_bits" in extraction.arrays:
            row["next_entropy_bits"] = float(extraction["next_entropy_bits"][i])
        for column, layer in enumerate(extraction.layers):
            row[f"attn_entropy_bits_L{layer}"] = float(head_mean[i, column])
        rows.append(row)
    return rows


def load_run(path: str | Path | Run) -> Run:
    """The manifest and the results of every suite in a `geomprobe run` directory (what
    geomprobe.run returns, or a CLI run's --out).

        results = load_run("runs/pythia-410m")
        results.suites                                  # suites with a results.json, in run order
        results.status("sula")                          # complete | failed | interrupted | skipped | running
        results.results["sula"]["conditions"]["main"]["mae_bits"]   # RESULTS_SCHEMA.md
        results.rows("sula"), results.table("sula")    # per-prompt rows (table: pandas)

    Returns a Run: path, manifest (manifest.json), results (suite -> its results.json as a dict),
    notes (what could not be read, or was written under another schema version). The arrays are not
    loaded: geomprobe.load_extraction(path / "extraction") reads the extract suite's.
    Results written before the schema had a header (schema 1) are read as they are, with a note.
    Raises RunDirectoryError (one line) when `path` has no readable manifest.json. A Run is read
    again from its directory (what changed on disk since)."""
    from geomprobe.suites.reading import read_run

    manifest, results, notes = read_run(path.path if isinstance(path, Run) else path)
    return Run(path=Path(path.path if isinstance(path, Run) else path), manifest=manifest, results=results,
               notes=notes)
