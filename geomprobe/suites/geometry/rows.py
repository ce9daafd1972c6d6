"""The geometry suite's per-prompt rows (Run.rows, Run.table): its sample's extraction (prompt ids,
lengths, next-token entropies, head-mean attention entropies per layer)."""

from __future__ import annotations

from geomprobe.results import extraction_rows, register_rows

register_rows("geometry", lambda run, condition: extraction_rows(run.path / "geometry" / "extraction"))
