"""The results schema: what every <run>/<suite>/results.json starts with.

SCHEMA_VERSION counts breaking changes of any suite's layout."""

from __future__ import annotations

SCHEMA_VERSION = 1


def with_header(suite: str, model: str, results: dict) -> dict:
    from geomprobe import __version__

    body = {k: v for k, v in results.items() if k not in ("schema_version", "suite", "model", "geomprobe_version")}
    return {"schema_version": SCHEMA_VERSION, "suite": suite, "model": model, "geomprobe_version": __version__,
            **body}
