"""Suites: functions (loaded, prompts, extraction_config, run_dir, progress) -> results under
<run>/<suite>/. Later suites register here."""

from __future__ import annotations

from collections.abc import Callable

from geomprobe.errors import ConfigError

from .extract import run_extract_suite

SUITES: dict[str, Callable] = {"extract": run_extract_suite}


def get_suite(name: str) -> Callable:
    try:
        return SUITES[name]
    except KeyError:
        raise ConfigError(f"unknown suite '{name}': available suites are {', '.join(sorted(SUITES))}") from None
