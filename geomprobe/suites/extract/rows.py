"""The extract suite's per-prompt rows (Run.rows, Run.table): its extraction's prompt ids, lengths,
next-token entropies and head-mean attention entropies per layer."""

from __future__ import annotations

from geomprobe.results import extraction_rows, register_rows

register_rows("extract", lambda run, condition: extraction_rows(run.path / "extraction"))
