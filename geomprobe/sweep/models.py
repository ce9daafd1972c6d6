"""The sweep's models: each --models entry checked without loading anything and expanded into its
(model, revision) jobs, and the name of each model's run directories (run_names)."""

from __future__ import annotations

from pathlib import Path

from geomprobe.errors import ConfigError, GeomprobeError

from .job import one_line
from .revisions import _final_revision, model_revisions


def _aliases() -> set[str]:
    from geomprobe.models.registry import MODELS

    return set(MODELS)


def _check_model(name: str) -> None:
    """Refuse, without loading or downloading anything, a model spec that cannot resolve."""
    from geomprobe.models.registry import MODELS

    if not name:
        raise ConfigError("--models has an empty entry: give comma-separated model specs")
    if name in MODELS:
        return
    from geomprobe.models.loading import resolve

    resolve(name)  # a local directory's config.json and weights, a hub id's form, or an unknown alias


def _is_local_dir(name: str) -> bool:
    return name not in _aliases() and Path(name).expanduser().is_dir()


def _model_revisions(names: list[str], revisions: str | None) -> tuple[list[tuple[str, str | None]], list[str]]:
    """(model, revision) of every job, in order and each once (a local directory by its absolute
    path), and one line per --models entry that does not resolve (all of them, not the first)."""
    from geomprobe.models.registry import parse_model_spec

    pairs: dict[tuple[str, str | None], None] = {}
    problems = []
    for spec in names:
        name, own = parse_model_spec(spec)  # a model's own @revisions stand instead of --revisions
        try:
            _check_model(name)
            if _is_local_dir(name):
                name = str(Path(name).expanduser().resolve())
            found = model_revisions(name, own if own is not None else revisions)
        except GeomprobeError as error:
            problems.append(one_line(error))
            continue
        pairs.update(dict.fromkeys((name, revision) for revision in found))
    # main and the checkpoint it equals, asked for by two entries (pythia-160m@all,pythia-160m): run once
    twice = [name for name, revision in pairs if revision is None and _final_revision(name) is not None
             and (name, _final_revision(name)) in pairs]
    return [pair for pair in pairs if pair[1] is not None or pair[0] not in twice], problems


def run_names(models: list[str]) -> dict[str, str]:
    """model -> the name of its run directories (`<name>@<revision>`): an alias or hub id by its
    slug; a local directory by its last path component, with as many parent components as it takes
    to differ from the others (`a_wt`, `b_wt`), and a number when even the whole path does not."""
    from geomprobe.runner import default_out

    local = {m: [p for p in Path(m).parts if p != Path(m).anchor] for m in models if _is_local_dir(m)}
    depth = dict.fromkeys(local, 1)

    def name_of(model: str) -> str:
        return default_out("_".join(local[model][-depth[model]:]) if model in local else model).name

    while True:
        groups: dict[str, list[str]] = {}
        for model in models:
            groups.setdefault(name_of(model), []).append(model)
        deeper = [m for group in groups.values() if len(group) > 1 for m in group
                  if m in local and depth[m] < len(local[m])]
        if not deeper:
            break
        for model in deeper:
            depth[model] += 1
    names, taken = {}, set()
    for model in models:
        name, n = name_of(model), 1
        while name in taken:
            n += 1
            name = f"{name_of(model)}-{n}"
        names[model] = name
        taken.add(name)
    return names
