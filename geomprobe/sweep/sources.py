"""The pre-check: every hub model's revisions are in the local Hugging Face cache or fetchable (config.json
only, never weights) before any job starts; apart from the listing of the jobs as the one part of
building a sweep that may reach the hub."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from .job import one_line
from .models import _is_local_dir


def _hub_config(repo_id: str, *, revision: str | None = None, local_files_only: bool = False) -> str:
    """A hub model's config.json at a revision, for loading._from_pretrained (so the check is the
    loader's own: the cache first, then the hub when it is reachable, and its one-line
    ModelNotFoundError): from the local Hugging Face cache with its weights beside it, else
    downloaded (config.json only, never weights). Raises OSError, as transformers does, when it is
    not at hand."""
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import EntryNotFoundError, HFValidationError

    from geomprobe.models.loading import WEIGHT_FILES

    try:
        config = hf_hub_download(repo_id, "config.json", revision=revision, local_files_only=local_files_only)
    except (EntryNotFoundError, HFValidationError) as error:  # no config.json, or no repo id: "not found"
        raise OSError(one_line(error)) from error
    if local_files_only and not any(next(Path(config).parent.glob(p), None) for p in WEIGHT_FILES):
        raise OSError(f"{repo_id}: config.json is in the cache but no weights")
    return config


def _fetch_error(source, revision: str | None) -> str | None:
    """None when `source` at `revision` is in the cache or fetchable, else the loader's one line."""
    from geomprobe.errors import ModelNotFoundError
    from geomprobe.models.loading import _from_pretrained

    try:
        _from_pretrained(_hub_config, dataclasses.replace(source, revision=revision))
    except ModelNotFoundError as error:
        return one_line(error)
    return None


def _in_cache(source, revision: str | None) -> bool:
    try:
        _hub_config(source.source, revision=revision, local_files_only=True)
    except OSError:
        return False
    return True


def _hub_online() -> bool:
    """Whether a hub model missing from the cache could be fetched now (loading._from_pretrained's
    own test: HF_HUB_OFFLINE unset, and the hub answers)."""
    from geomprobe.models.loading import _hub_reachable

    offline = os.environ.get("HF_HUB_OFFLINE", "0") not in ("0", "", "false", "False")
    return not offline and _hub_reachable()


def _hub_problem(source, revisions: list, online) -> str | None:
    """One line when some revisions of a hub model are neither in the cache nor fetchable: the
    loader's message for the first, the others named after it."""
    from concurrent.futures import ThreadPoolExecutor

    missing = [r for r in revisions if not _in_cache(source, r)]
    if not missing:
        return None
    errors = [_fetch_error(source, missing[0])]
    if len(missing) > 1:
        if errors[0] is None or online():  # the hub answers: ask it for each (config.json only)
            with ThreadPoolExecutor(max_workers=8) as pool:
                errors += list(pool.map(lambda r: _fetch_error(source, r), missing[1:]))
        else:  # out of reach: none of the others can be fetched either
            errors += [errors[0]] * (len(missing) - 1)
    failed = [(r, e) for r, e in zip(missing, errors) if e is not None]
    if not failed:
        return None
    others = [r or "main" for r, _ in failed[1:]]
    if len(others) > 6:
        others = others[:3] + ["..."] + others[-2:]
    return failed[0][1] + (f" (and {len(failed) - 1} more revision(s) of it: {', '.join(others)})" if others else "")


def source_problems(pairs: list[tuple[str, str | None]]) -> list[str]:
    """One line per hub model (alias or hub id) some of whose revisions are neither in the local
    Hugging Face cache (config.json and weights) nor fetchable now. Local directories and
    revisions were checked as the jobs were listed; geomprobe's own models are made by their job."""
    from geomprobe.models.loading import resolve
    from geomprobe.models.registry import MODELS

    hub: dict[str, tuple] = {}  # model -> (its hub source, the revisions wanted)
    for name, revision in pairs:
        if (name in MODELS and MODELS[name].kind != "hub") or _is_local_dir(name):
            continue
        source = resolve(name if revision is None else f"{name}@{revision}")  # no download: the hub id
        if not source.is_local:  # (an alias may have a packaged copy)
            hub.setdefault(name, (source, []))[1].append(revision)
    known: list[bool] = []

    def online() -> bool:  # asked once per sweep, and only when something is missing
        if not known:
            known.append(_hub_online())
        return known[0]

    problems = [_hub_problem(source, wanted, online) for source, wanted in hub.values()]
    return [problem for problem in problems if problem is not None]
