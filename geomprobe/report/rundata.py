"""What the report reads from a run directory: files only, no statistics (the report
draws what the results say; statistics live in geomprobe.analysis).

A run directory is either a `geomprobe run` output (manifest.json and <suite>/results.json, with
the suites' arrays beside them) or a `geomprobe windtunnel train` output (metrics.json and, after
`windtunnel curves`, curves.json). A geomprobe run on a wind-tunnel model also picks up the
metrics.json and curves.json saved with that model (its manifest's model source).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from geomprobe.errors import RunDirectoryError


@dataclass
class RunData:
    path: Path
    name: str
    manifest: dict | None = None
    results: dict[str, dict] = field(default_factory=dict)  # suite name -> <suite>/results.json
    windtunnel: dict | None = None  # metrics.json of a `windtunnel train` run
    windtunnel_dir: Path | None = None  # where metrics.json was found (this run, or its model's directory)
    curves: list | None = None  # curves.json (frame-precision dissociation)
    notes: list[str] = field(default_factory=list)  # what is missing, unfinished or unreadable
    label: str = ""  # model@revision, unique in the report (geomprobe.compare.identities); the name until set
    step: int | None = None  # training step (a revision like step1000, or a wind tunnel's final step)
    compact: bool = False  # in a report of several runs: figures drop what is heavy (per-prompt detail)
    model_name: str = ""  # the model without its revision (geomprobe.compare.RunIdentity.model)
    revision: str = ""  # the revision, "main" when none
    anchor: str = ""  # the id of the run's section in the page

    def __post_init__(self):
        self.label = self.label or self.name

    @property
    def model(self) -> str:
        if self.manifest and isinstance(self.manifest.get("model"), dict):
            model = self.manifest["model"]
            return str(model.get("spec") or model.get("source") or self.name)
        if self.windtunnel:
            return f"{self.windtunnel.get('arch', '?')} wind tunnel ({self.windtunnel.get('task', '?')})"
        return self.name

    def array(self, relative: str) -> np.ndarray | None:
        """A .npy array under the run directory, or None when it is absent or unreadable."""
        from geomprobe.files import regular_file
        from geomprobe.readers import ARRAY

        path = self.path / relative
        if not path.exists():
            return None
        try:
            return np.load(regular_file(path, ARRAY))  # a regular file first: np.load would block on a FIFO
        except (OSError, ValueError, EOFError, RunDirectoryError):
            self.notes.append(f"could not read {relative}")
            return None

    def jsonl(self, relative: str) -> list[dict] | None:
        """The rows of a JSON-lines file under the run directory (e.g. sula/prompts-main.jsonl, the
        per-prompt outputs a suite wrote), or None when it is absent or unreadable."""
        from geomprobe.readers import read_rows

        path = self.path / relative
        if not path.exists():
            return None
        try:
            rows = read_rows(path)
        except RunDirectoryError as error:
            self.notes.append(f"could not read {relative}: {error}")
            return None
        return [row for row in rows if isinstance(row, dict)]

    def suite_status(self, suite: str) -> str | None:
        suites = (self.manifest or {}).get("suites") or {}
        entry = suites.get(suite)
        return entry.get("status") if isinstance(entry, dict) else None


def _read_json(path: Path, notes: list[str], label: str, reader=None):
    """The value of a JSON file the report draws (read by `reader`, geomprobe.readers.read_data by
    default), or None with a note saying why it could not be read."""
    from geomprobe.readers import read_data

    try:
        return (reader or read_data)(path)
    except RunDirectoryError as error:
        notes.append(f"could not read {label}: {error}")
        return None


def load_run(path: str | Path, name: str | None = None) -> RunData:
    """Everything the report can draw from one run directory. Raises RunDirectoryError (one
    line) when the directory holds nothing the report can use."""
    path = Path(path)
    if not path.is_dir():
        raise RunDirectoryError(f"{path} is not a directory: pass a run directory written by `geomprobe run` or "
                                "`geomprobe windtunnel train`")
    run = RunData(path=path, name=name or path.name)
    if (path / "manifest.json").exists():
        from geomprobe.suites.reading import read_run  # the typed reader: schema notes included

        try:
            manifest, results, notes = read_run(path)
        except RunDirectoryError as error:
            run.notes.append(str(error))
        else:
            run.manifest, run.results = manifest, results
            run.notes += notes
    else:
        from geomprobe.readers import read_results

        for results in sorted(path.glob("*/results.json")):
            data = _read_json(results, run.notes, f"{results.parent.name}/results.json", read_results)
            if isinstance(data, dict):
                run.results[results.parent.name] = data
    suites = (run.manifest or {}).get("suites") or {}
    for suite, entry in suites.items():
        status = entry.get("status") if isinstance(entry, dict) else None
        if suite not in run.results and status == "skipped":
            run.notes.append(f"{suite} suite: skipped, not drawn ({entry.get('why') or 'no reason recorded'})")
        elif suite not in run.results:
            run.notes.append(f"{suite} suite: no {suite}/results.json (status {status or 'unknown'}): "
                             f"rerun `geomprobe run --suite {suite} --out {path}` to finish it")
        elif status != "complete":
            run.notes.append(f"{suite} suite: status {status or 'unknown'}; drawn from the results.json on disk")
    _attach_windtunnel(run)
    if not run.results and run.windtunnel is None and run.curves is None:
        if run.notes:  # something was there but could not be read: say what, and how to fix it
            raise RunDirectoryError(f"{path} has nothing to report: {run.notes[0]}")
        raise RunDirectoryError(f"{path} has nothing to report (no <suite>/results.json, no metrics.json): run "
                                f"`geomprobe run --suite geometry --out {path}` or pass a `geomprobe windtunnel "
                                "train` directory")
    return run


def _attach_windtunnel(run: RunData) -> None:
    """metrics.json and curves.json from the run itself, or from the wind-tunnel model it probed."""
    candidates = [run.path]
    source = ((run.manifest or {}).get("model") or {}).get("source") if run.manifest else None
    if source and (Path(source) / "windtunnel.json").exists():
        candidates.append(Path(source))
    for directory in candidates:
        if (directory / "metrics.json").exists() and run.windtunnel is None:
            from geomprobe.readers import read_metrics

            metrics = _read_json(directory / "metrics.json", run.notes, str(directory / "metrics.json"), read_metrics)
            if isinstance(metrics, dict) and "eval" in metrics:
                run.windtunnel, run.windtunnel_dir = metrics, directory
        if (directory / "curves.json").exists() and run.curves is None:
            curves = _read_json(directory / "curves.json", run.notes, str(directory / "curves.json"))
            if isinstance(curves, list) and curves:
                run.curves = curves
