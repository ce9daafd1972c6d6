"""The sula suite's per-prompt rows (Run.rows, Run.table): each condition's prompts-<condition>.jsonl,
with its Bayes quantities and the model's outputs, one row per prompt."""

from __future__ import annotations

from geomprobe.errors import RunDirectoryError
from geomprobe.readers import read_rows
from geomprobe.results import register_rows


def sula_rows(run, condition: str | None) -> list[dict]:
    """Every condition's rows (main first) with a `condition` column, or one condition's."""
    work = run.path / "sula"
    files = sorted(work.glob("prompts-*.jsonl"), key=lambda f: (f.stem != "prompts-main", f.stem))
    if not files:
        raise RunDirectoryError(f"{work} has no prompts-<condition>.jsonl: run the sula suite first")
    names = [f.stem.removeprefix("prompts-") for f in files]
    if condition is not None and condition not in names:
        raise RunDirectoryError(f"no sula condition '{condition}' in {work}: it has {', '.join(names)}")
    rows = []
    for name, path in zip(names, files):
        if condition is None or name == condition:
            rows += [{"condition": name, **row} for row in read_rows(path) if isinstance(row, dict)]
    return rows


register_rows("sula", sula_rows)
