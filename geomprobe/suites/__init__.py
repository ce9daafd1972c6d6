"""Suites: functions SuiteContext -> results under <run>/<suite>/ (see geomprobe.runner)."""

from __future__ import annotations

from collections.abc import Callable

from geomprobe.errors import ConfigError

from .ablation import run_ablation_suite
from .domain import run_domain_suite
from .extract import run_extract_suite
from .geometry import run_geometry_suite
from .mechanisms import run_mechanisms_suite
from .sula import run_sula_suite

SUITES: dict[str, Callable] = {"extract": run_extract_suite, "geometry": run_geometry_suite,
                               "domain": run_domain_suite, "sula": run_sula_suite,
                               "ablation": run_ablation_suite, "mechanisms": run_mechanisms_suite}


def get_suite(name: str) -> Callable:
    try:
        return SUITES[name]
    except KeyError:
        raise ConfigError(f"unknown suite '{name}': available suites are {', '.join(sorted(SUITES))}") from None
