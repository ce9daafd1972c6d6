"""Where geomprobe keeps what it builds: below both geomprobe.models and geomprobe.windtunnel."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """geomprobe's own cache (built-in and trained models): $GEOMPROBE_CACHE or ~/.cache/geomprobe."""
    return Path(os.environ.get("GEOMPROBE_CACHE", Path.home() / ".cache" / "geomprobe"))
