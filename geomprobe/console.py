"""How geomprobe talks on the console: summary tables and the final result line on stdout (wide
enough to read whole), everything else on stderr so redirected results stay clean: progress
(asked for with `progress=True`) and log records.

    with ProgressReport(enabled, "sula: main", total=n_prompts) as report:
        report.advance(batch_size)

The library logs through `logging` (loggers under "geomprobe") and prints nothing else unless
asked: from Python, `logging.basicConfig(level=logging.INFO)` shows the notices the command line
shows (a wind tunnel trained on first use, a suite skipped), DEBUG what it does step by step. The
command line installs `cli_logging`: INFO by default, DEBUG with --verbose, errors only with --quiet.
`silenced` is run(..., quiet=True): nothing at all on the console.
"""

from __future__ import annotations

import logging
import sys
import time
import warnings
from contextlib import contextmanager
from pathlib import Path

LOGGER = "geomprobe"


def table_console(min_width: int = 130):
    """A rich Console at least `min_width` wide: summary tables are read whole, and a pipe or a
    log file would otherwise get rich's 80-column default and wrap every cell. No cell is ever cut
    to an ellipsis: a column too narrow for a number folds it onto the next line instead."""
    from rich.console import Console
    from rich.table import Table

    class WholeCells(Console):
        def print(self, *objects, **kwargs):
            for table in objects:
                if isinstance(table, Table):
                    for column in table.columns:
                        column.overflow = "fold"
            super().print(*objects, **kwargs)

    return WholeCells(width=max(Console().width, min_width))


def in_notebook() -> bool:
    """Whether the code runs in a Jupyter kernel (where rich's live bars need ipywidgets)."""
    shell = sys.modules.get("IPython")
    try:
        ip = shell.get_ipython() if shell is not None else None
    except Exception:  # noqa: BLE001 - an IPython that cannot say is not a notebook
        return False
    return ip is not None and type(ip).__name__ == "ZMQInteractiveShell"


class NotebookBar:
    """A progress bar for Jupyter without widgets: one HTML output (an HTML <progress> element and
    the counts) updated in place through IPython's display handles, at most five times a second."""

    def __init__(self, label: str, total: int, completed: int = 0, unit: str = "prompts"):
        from IPython.display import HTML, display

        self._html, self.label, self.total, self.completed, self.unit = HTML, label, total, completed, unit
        self.start = self.shown = time.monotonic()
        self.handle = display(HTML(self._text()), display_id=True)

    def _text(self) -> str:
        from html import escape

        elapsed = time.monotonic() - self.start
        done = f"{self.completed}/{self.total} {self.unit}, {elapsed:.0f} s"
        return (f"<div style='font-family:monospace;font-size:12px'>{escape(self.label)} "
                f"<progress value='{self.completed}' max='{max(self.total, 1)}' style='width:220px'></progress> "
                f"{escape(done)}</div>")

    def advance(self, n: int) -> None:
        self.completed += n
        if time.monotonic() - self.shown >= 0.2 or self.completed >= self.total:
            self.shown = time.monotonic()
            self.handle.update(self._html(self._text()))

    def close(self) -> None:
        self.handle.update(self._html(self._text()))


class ProgressReport:
    """Progress on stderr: a live rich bar on a terminal; in Jupyter an HTML bar updated in place
    (NotebookBar: no ipywidgets needed); otherwise a plain line every ~10% of the batches and at the
    end, since a live bar on a pipe or a log file shows nothing until it finishes. Nothing at all
    when disabled."""

    def __init__(self, enabled: bool, label: str, total: int, completed: int = 0, n_batches: int | None = None,
                 verb: str = "extract", unit: str = "prompts"):
        n_batches = total - completed if n_batches is None else n_batches
        # "extract sula: main"; the extract suite's own label is not doubled ("extract", not "extract extract")
        self.verb = "" if label == verb or label.startswith(f"{verb}:") else verb
        self.unit = unit
        self.enabled, self.label, self.total, self.completed = enabled, label, total, completed
        self.n_batches, self.batches = n_batches, 0
        self.every = max(1, -(-n_batches // 10))
        self.bar = self.task = self.notebook = None
        self.start = time.monotonic()
        self.live = False
        if enabled:
            from rich.console import Console

            self.console = Console(stderr=True)
            self.live = self.console.is_terminal and not in_notebook()

    def __enter__(self) -> ProgressReport:
        if not self.enabled:
            return self
        if in_notebook():
            label = f"{self.verb} {self.label}".strip()
            self.notebook = NotebookBar(label, self.total, self.completed, self.unit)
        elif self.live:
            from rich.markup import escape
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            columns = [TextColumn(f"[bold]{self.verb}[/] {{task.description}}" if self.verb else "{task.description}"),
                       BarColumn(), MofNCompleteColumn(),
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
        if self.notebook is not None:
            self.notebook.advance(n)
        elif self.bar is not None:
            self.bar.advance(self.task, n)
        elif self.enabled and (self.batches % self.every == 0 or self.batches == self.n_batches):
            self._line(f"{self.completed}/{self.total} {self.unit}, {time.monotonic() - self.start:.0f} s")

    def _line(self, text: str) -> None:
        print(f"{self.verb} {self.label}: {text}".lstrip(), file=sys.stderr, flush=True)

    def __exit__(self, *exc) -> None:
        if self.notebook is not None:
            self.notebook.close()
        if self.bar is not None:
            self.bar.__exit__(*exc)


class _StderrHandler(logging.Handler):
    """One line per record on the current sys.stderr (looked up per record, so a live rich bar,
    which redirects stderr while it draws, and test runners that swap stderr get the lines)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            print(self.format(record), file=sys.stderr, flush=True)
        except Exception:  # noqa: BLE001 - logging must never break the run
            self.handleError(record)


class _LineFormatter(logging.Formatter):
    """Notices and errors as they are, `warning: ...`, `debug (logger): ...`. An `error: ...` line
    stays the mark of a mistake the user can fix (geomprobe.cli.user_errors), so a logged error,
    such as a suite that failed with a bug and its traceback to follow, carries no prefix."""

    def format(self, record: logging.LogRecord) -> str:
        text = record.getMessage()
        if record.levelno == logging.WARNING:
            return f"warning: {text}"
        if record.levelno < logging.INFO:
            return f"debug ({record.name}): {text}"
        return text


def log_level(quiet: bool = False, verbose: bool = False) -> int:
    """The level of geomprobe's loggers on the command line: ERROR with --quiet, DEBUG with
    --verbose, else INFO."""
    from geomprobe.errors import ConfigError

    if quiet and verbose:
        raise ConfigError("--quiet and --verbose contradict each other: pass one of them")
    return logging.ERROR if quiet else logging.DEBUG if verbose else logging.INFO


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """warnings.showwarning on the command line: a warning becomes a `warning: ...` line of
    geomprobe's log (so --quiet silences it too); one from outside geomprobe says where from."""
    inside = Path(filename).resolve().is_relative_to(Path(__file__).resolve().parent)
    where = "" if inside else f" ({category.__name__}, {filename}:{lineno})"
    logging.getLogger(f"{LOGGER}.warnings").warning("%s%s", message, where)


@contextmanager
def cli_logging(quiet: bool = False, verbose: bool = False):
    """While active, geomprobe's log records at log_level(quiet, verbose) and above go to stderr,
    one line each, and so do Python warnings; on exit all is as it was (so a test that invokes
    the CLI leaves no handler behind)."""
    level = log_level(quiet, verbose)
    logger = logging.getLogger(LOGGER)
    handler = _StderrHandler(level)
    handler.setFormatter(_LineFormatter())
    previous, previous_show = logger.level, warnings.showwarning
    logger.addHandler(handler)
    logger.setLevel(level)
    warnings.showwarning = _show_warning
    try:
        yield level
    finally:
        warnings.showwarning = previous_show
        logger.removeHandler(handler)
        logger.setLevel(previous)


# libraries whose own log handlers (bound to the stderr of their first use) `silenced` quiets too
SILENCED_LIBRARIES = ("transformers", "huggingface_hub", "accelerate")


class _NullWriter:
    """A text stream that keeps nothing (sys.stdout and sys.stderr while `silenced`)."""

    encoding = "utf-8"

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


@contextmanager
def silenced(enabled: bool = True):
    """While active (when enabled), nothing geomprobe does reaches the console: its log records are
    dropped (handlers the caller installed included), Python warnings are ignored, and what would be
    written to sys.stdout or sys.stderr (tables, bars, a library's notices) is discarded. Exceptions
    still propagate. run(..., quiet=True) runs under it."""
    if not enabled:
        yield
        return
    import contextlib

    loggers = [logging.getLogger(name) for name in (LOGGER, *SILENCED_LIBRARIES)]
    previous = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL + 1)
    sink = _NullWriter()
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            warnings.simplefilter("ignore")
            yield
    finally:
        for logger, level in zip(loggers, previous):
            logger.setLevel(level)


def logging_enabled(level: int = logging.INFO) -> bool:
    """Whether geomprobe's records at `level` reach a handler: the default of `progress` where a
    caller did not say (first-use wind-tunnel training), so --quiet silences it and plain Python
    prints nothing."""
    return logging.getLogger(LOGGER).isEnabledFor(level)


@contextmanager
def transformers_silenced():
    """transformers' progress bars ("Loading weights") and its log records below ERROR off while
    geomprobe loads a model, then as they were; also a decorator. Under DEBUG (--verbose)
    transformers' warnings stay on."""
    import transformers.utils.logging as hf_logging

    verbosity = hf_logging.get_verbosity()
    if not logging_enabled(logging.DEBUG):
        hf_logging.set_verbosity_error()
    hook = getattr(hf_logging, "set_tqdm_hook", None)
    if hook is not None:  # scoped: only transformers' own bars, the hub's download bars untouched
        previous_hook = hook(lambda factory, args, kwargs: hf_logging.EmptyTqdm(*args, **kwargs))
    else:
        bars = hf_logging.is_progress_bar_enabled()
        hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        hf_logging.set_verbosity(verbosity)
        if hook is not None:
            hook(previous_hook)
        elif bars:
            hf_logging.enable_progress_bar()
