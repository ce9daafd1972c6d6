"""Suites: each module registers itself (geomprobe.suites.base.register_suite); importing this
package registers the built-in ones in the order `--suite all` runs them. Third-party suites
register through the `geomprobe.suites` entry-point group (a module that calls register_suite)."""

from __future__ import annotations

from . import ablation, domain, extract, geometry, mechanisms, sula  # noqa: F401  (registers, in run order)
from .base import SUITES, SuiteConfig, SuiteContext, get_suite, parse_suites, register_suite

# registry order is run order: extract, geometry, domain, sula, ablation (reuses sula's axis), mechanisms
_ORDER = ("extract", "geometry", "domain", "sula", "ablation", "mechanisms")
for _name in _ORDER:
    SUITES[_name] = SUITES.pop(_name)


def _load_plugins() -> None:
    from importlib.metadata import entry_points

    for entry in entry_points(group="geomprobe.suites"):
        entry.load()


_load_plugins()

__all__ = ["SUITES", "SuiteConfig", "SuiteContext", "get_suite", "parse_suites", "register_suite"]
