"""Which run is which: a run directory's model@revision label (unique among the runs compared), its
training step, the order compare shows runs in, and the suites it has finished. Both layouts and the
report name runs this way, so it is apart from either.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

from geomprobe.errors import RunDirectoryError


def suite_order() -> tuple[str, ...]:
    """The registered suites in run order (geomprobe.suites.SUITES): a run's suites are read in it."""
    from geomprobe.suites import SUITES

    return tuple(SUITES)
DEFAULT_REVISION = "main"
_STEP = re.compile(r"^step[-_]?(\d+)$", re.IGNORECASE)


def _read(path: Path) -> dict | None:
    """A run's manifest.json or a suite's results.json by its reader (geomprobe.readers), None when
    it is not there; anything unreadable is a one-line RunDirectoryError naming the fix."""
    from geomprobe.readers import read_manifest, read_results

    if not path.exists() and not path.is_symlink():
        return None
    if path.name == "manifest.json":
        return read_manifest(path)
    return read_results(path, f"rerun `geomprobe run --suite {path.parent.name} --out {path.parent.parent}` with the "
                        "same --model to write it again")


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
    from geomprobe.errors import GeomprobeError
    from geomprobe.readers import read_metrics

    for directory in directories:
        metrics = directory / "metrics.json"
        if not metrics.is_file():
            continue
        try:
            steps = read_metrics(metrics).get("steps")
        except GeomprobeError:
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
    results.json whose manifest entry is complete (or has no entry). One that changed since its suite
    wrote it is read as it is, with a warning line (geomprobe.suites.reading.say_changed)."""
    from geomprobe.suites.reading import say_changed

    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise RunDirectoryError(f"{run_dir} is not a directory: pass a run directory written by `geomprobe run`")
    manifest = _read(run_dir / "manifest.json")
    statuses = (manifest or {}).get("suites") or {}
    found = {path.parent.name: path for path in run_dir.glob("*/results.json")}
    known = suite_order()
    order = sorted(found, key=lambda s: (known.index(s) if s in known else len(known), s))
    results, notes = {}, []
    for suite in order:
        entry = statuses.get(suite)
        status = entry.get("status") if isinstance(entry, dict) else None
        if entry is not None and status != "complete":
            notes.append(f"{run_dir}: {suite} suite left out (status {status or 'unknown'})")
            continue
        data = _read(found[suite])
        if data is not None:
            say_changed(found[suite], manifest, stacklevel=3)
            results[suite] = data
    return manifest, results, notes
