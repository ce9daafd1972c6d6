"""Reading a `geomprobe run` directory: the manifest and every suite's results.json, with notes on
what could not be read or was written under another schema version. geomprobe.results.load_run
wraps it in a Run; the report (geomprobe.report.rundata) reads through it too, so neither layer
above needs the other to read a run.
"""

from __future__ import annotations

import warnings
from pathlib import Path

from geomprobe.errors import RunDirectoryError
from geomprobe.suites.base import SUITES
from geomprobe.suites.schema import SCHEMA_VERSION


def schema_version_of(suite: str) -> int:
    """The schema version a registered suite writes (SCHEMA_VERSION where it declared none)."""
    spec = SUITES.get(suite)
    return SCHEMA_VERSION if spec is None or spec.schema_version is None else spec.schema_version


def read_run(path: str | Path) -> tuple[dict, dict[str, dict], list[str]]:
    """(manifest, suite -> results.json, notes) of a run directory, the suites in the order they ran.
    Every file is read by its reader (geomprobe.readers: bounded, checked against its schema). A
    results.json that cannot be read, or has another schema version, is a note; one that changed
    since its suite wrote it (say_changed) is read as it is, with a warning line and a note; a
    missing or damaged manifest.json is a one-line RunDirectoryError naming the fix."""
    from geomprobe.readers import read_manifest, read_results

    path = Path(path)
    manifest_path = path / "manifest.json"
    if not manifest_path.exists() and not manifest_path.is_symlink():
        raise RunDirectoryError(f"{path} is not a geomprobe run directory (no manifest.json): pass the --out of a "
                                "`geomprobe run`")
    manifest = read_manifest(manifest_path, "rerun `geomprobe run` with --overwrite to start this run afresh")
    results, notes = {}, []
    order = list(manifest.get("suites") or {})  # the order the suites ran in
    for file in sorted(path.glob("*/results.json"),
                       key=lambda f: (order.index(f.parent.name) if f.parent.name in order else len(order),
                                      f.parent.name)):
        suite = file.parent.name
        try:
            data = read_results(file, f"rerun `geomprobe run --suite {suite} --out {path}` with the same --model to "
                                "write it again")
        except RunDirectoryError as error:
            notes.append(str(error))
            continue
        changed = say_changed(file, manifest, stacklevel=3)
        if changed is not None:
            notes.append(changed)
        version, current = data.get("schema_version", 1), schema_version_of(suite)
        if version > current:
            notes.append(f"{suite}/results.json has schema {version}, newer than this geomprobe's "
                         f"{current}: upgrade geomprobe to read it fully")
        elif version < current:
            notes.append(f"{suite}/results.json has schema {version} (this geomprobe writes {current}): "
                         f"rerun the suite to rewrite it")
        results[suite] = data
    return manifest, results, notes


def say_changed(path: Path, manifest: dict | None, stacklevel: int = 2) -> str | None:
    """When <run>/<suite>/results.json no longer holds what its suite wrote (its sha256 differs from
    the manifest entry's results_sha256), one warning line naming it, also returned; else None (and
    always for a run written before geomprobe recorded the hash). Read-only commands show the file
    as it is: a run folder may be put together by hand."""
    from geomprobe.integrity import SHOWN_AS_EDITED, changed_line, file_sha256

    entry = ((manifest or {}).get("suites") or {}).get(path.parent.name)
    recorded = entry.get("results_sha256") if isinstance(entry, dict) else None
    if recorded is None or file_sha256(path) == recorded:
        return None
    line = changed_line(path, "manifest.json", SHOWN_AS_EDITED)
    warnings.warn(line, stacklevel=stacklevel + 1)
    return line


def data_frame(rows: list[dict], what: str):
    """rows as a pandas DataFrame; one line naming the fix when pandas is not installed."""
    try:
        import pandas as pd
    except ImportError:
        raise RunDirectoryError(f"{what} needs pandas: pip install pandas (or read the rows as plain dicts)") \
            from None
    return pd.DataFrame(rows)
