"""How geomprobe talks on the console: summary tables (stdout, wide enough to read whole) and
progress (stderr, so redirected results stay clean).

    with ProgressReport(enabled, "sula: main", total=n_prompts) as report:
        report.advance(batch_size)
"""

from __future__ import annotations

import sys
import time


def table_console(min_width: int = 130):
    """A rich Console at least `min_width` wide: summary tables are read whole, and a pipe or a
    log file would otherwise get rich's 80-column default and wrap every cell."""
    from rich.console import Console

    console = Console()
    return Console(width=max(console.width, min_width))


class ProgressReport:
    """Progress on stderr: a live rich bar on a terminal (or in Jupyter); otherwise a plain line every
    ~10% of the batches and at the end, since a live bar on a pipe or a log file shows nothing until
    it finishes. Nothing at all when disabled."""

    def __init__(self, enabled: bool, label: str, total: int, completed: int = 0, n_batches: int | None = None,
                 verb: str = "extract", unit: str = "prompts"):
        n_batches = total - completed if n_batches is None else n_batches
        self.verb, self.unit = verb, unit
        self.enabled, self.label, self.total, self.completed = enabled, label, total, completed
        self.n_batches, self.batches = n_batches, 0
        self.every = max(1, -(-n_batches // 10))
        self.bar = self.task = None
        self.start = time.monotonic()
        self.live = False
        if enabled:
            from rich.console import Console

            self.console = Console(stderr=True)
            self.live = self.console.is_terminal or self.console.is_jupyter

    def __enter__(self) -> ProgressReport:
        if not self.enabled:
            return self
        if self.live:
            from rich.markup import escape
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            columns = [TextColumn(f"[bold]{self.verb}[/] {{task.description}}"), BarColumn(), MofNCompleteColumn(),
                       TimeElapsedColumn(), TimeRemainingColumn()]
            self.bar = Progress(*columns, console=self.console, transient=False)
            self.bar.__enter__()
            self.task = self.bar.add_task(escape(self.label), total=self.total, completed=self.completed)
        elif self.completed:
            self._line(f"resuming, {self.completed}/{self.total} {self.unit} done before")
        return self

    def advance(self, n: int) -> None:
        self.completed += n
        self.batches += 1
        if self.bar is not None:
            self.bar.advance(self.task, n)
        elif self.enabled and (self.batches % self.every == 0 or self.batches == self.n_batches):
            self._line(f"{self.completed}/{self.total} {self.unit}, {time.monotonic() - self.start:.0f} s")

    def _line(self, text: str) -> None:
        print(f"{self.verb} {self.label}: {text}", file=sys.stderr, flush=True)

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.__exit__(*exc)
