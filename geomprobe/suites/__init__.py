"""Suites: each module registers itself (geomprobe.suites.base.register_suite) when imported here;
the import order below is the order `--suite all` runs them in (ablation after sula, whose axis
it reuses). Third-party suites register through the `geomprobe.suites` entry-point group (a module
that calls register_suite)."""

from __future__ import annotations

# isort: off
from . import extract, geometry, domain, sula, ablation, mechanisms  # noqa: F401  (registers, in run order)
# isort: on
from .base import SUITES, SuiteConfig, SuiteContext, get_suite, parse_suites, register_suite, unregister_suite


def _load_plugins() -> None:
    from importlib.metadata import entry_points

    for entry in entry_points(group="geomprobe.suites"):
        entry.load()


_load_plugins()

__all__ = ["SUITES", "SuiteConfig", "SuiteContext", "get_suite", "parse_suites", "register_suite", "unregister_suite"]
