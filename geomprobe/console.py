"""One place that decides how wide summary tables are printed."""

from __future__ import annotations


def table_console(min_width: int = 130):
    """A rich Console at least `min_width` wide: summary tables are read whole, and a pipe or a
    log file would otherwise get rich's 80-column default and wrap every cell."""
    from rich.console import Console

    console = Console()
    return Console(width=max(console.width, min_width))
