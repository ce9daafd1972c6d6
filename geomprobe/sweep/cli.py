"""`geomprobe sweep`'s command line: its options (the sweep's, the executor's, and every `geomprobe run`
option but those set per job), built from the suite registry each time typer reads them, and the body
that turns them into a sweep and runs it or shows its status (sweep_from_cli)."""

from __future__ import annotations

import dataclasses
import inspect
import json
from pathlib import Path
from typing import Optional

import typer

from geomprobe.commandline import SuiteAwareCommand, _parameter, option_specs, selected_suites
from geomprobe.errors import ConfigError

from .driver import _check_out, run_sweep
from .settings import EXECUTOR_FIELDS, PER_JOB, ExecutorOptions
from .slurm import _slurm_executor, slurm_script
from .spec import build_sweep, read_sweep_file
from .status import print_status, status_json

SWEEP_PANEL = "sweep"
EXECUTOR_PANEL = "executor (local: --gpus-per-job, --time; slurm: all)"


class SweepClickCommand(SuiteAwareCommand):
    """`geomprobe sweep --suites S --help` shows the model options and S's (like `run --suite S`)."""

    def parse_args(self, ctx, args):
        ctx.meta["geomprobe_suites"] = selected_suites(["--suite" if a == "--suites" else
                                                        a.replace("--suites=", "--suite=", 1) for a in args])
        return typer.core.TyperCommand.parse_args(self, ctx, args)


def _sweep_parameters() -> list[inspect.Parameter]:
    def param(name, annotation, default):
        return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation, default=default)

    params = [
        param("sweep_models", Optional[str], typer.Option(
            None, "--models", help="comma-separated model specs (aliases, hub ids, local or wind-tunnel training "
                                   "directories); MODEL@REVISIONS gives one model its own revisions (one, all or "
                                   "log:N) instead of --revisions", rich_help_panel=SWEEP_PANEL)),
        param("sweep_revisions", Optional[str], typer.Option(
            None, "--revisions", help="comma-separated revisions of every model, all, or log:N (N log-spaced "
                                      "checkpoints with the first and the last: Pythia's 154, or a wind tunnel's); "
                                      "default: the main / final model", rich_help_panel=SWEEP_PANEL)),
        param("sweep_suites", Optional[str], typer.Option(
            None, "--suites", "--suite", help="suites of every job, comma-separated or all (default extract)",
            rich_help_panel=SWEEP_PANEL)),
        param("sweep_out", Optional[str], typer.Option(
            None, "--out", help="sweep directory: sweep.json, runs/<model>@<revision>/, logs/",
            rich_help_panel=SWEEP_PANEL)),
        param("sweep_file", Optional[Path], typer.Option(
            None, "--file", help="the sweep as a file (TOML, or YAML with pyyaml): models, revisions, suites, out, "
                                 "executor settings, and an options table; options given here override it",
            rich_help_panel=SWEEP_PANEL)),
        param("sweep_status", Optional[Path], typer.Option(
            None, "--status", help="print the state of each job of the sweep in DIR (done / running / failed / "
                                   "pending / damaged) and the totals, then exit", rich_help_panel=SWEEP_PANEL,
            metavar="DIR")),
        param("sweep_json", bool, typer.Option(
            False, "--json", help="with --status: print the status as JSON (totals, and per job its state, "
                                  "detail, suites done, time, job id and run directory)", rich_help_panel=SWEEP_PANEL)),
        param("sweep_dry_run", bool, typer.Option(
            False, "--dry-run", help="list the jobs (and, for slurm, print the sbatch script) without running them",
            rich_help_panel=SWEEP_PANEL)),
    ]
    for field in dataclasses.fields(ExecutorOptions):
        kind = {"executor": str, "partition": str, "slurm_account": str, "slurm_qos": str}.get(field.name, str)
        metavar = {"executor": "local|inline|slurm", "time": "MINUTES", "mem_gb": "GB", "gpus_per_job": "INT",
                   "cpus_per_job": "INT", "array_parallelism": "INT"}.get(field.name, "TEXT")
        extra = {"metavar": metavar}
        params.append(param(f"sweep_{field.name}", Optional[kind], typer.Option(
            None, "--" + field.name.replace("_", "-"), help=field.metadata["help"], rich_help_panel=EXECUTOR_PANEL,
            show_default=False, **extra)))
    for spec in option_specs().values():
        if spec.name not in PER_JOB:
            params.append(_parameter(spec))
    params.append(param("quiet", bool, typer.Option(False, "--quiet", help="no progress lines or summary table")))
    return params


class SweepCommand:
    """The callback of `geomprobe sweep`; its signature is computed from the suite registry each
    time typer reads it (as `geomprobe run`'s)."""

    def __init__(self, handler, doc: str):
        self.handler = handler
        self.__doc__ = doc
        self.__name__ = "sweep"
        self.__module__ = __name__

    @property
    def __signature__(self):
        return inspect.Signature(_sweep_parameters())

    @property
    def __annotations__(self):
        return {p.name: p.annotation for p in _sweep_parameters()}

    def __call__(self, **kwargs):
        return self.handler(kwargs)


def sweep_from_cli(kwargs: dict, on_inline=None) -> int:
    """`geomprobe sweep`'s body: the exit status (0, or 1 when a job failed)."""
    status = kwargs.get("sweep_status")
    if status is not None:
        given = [k for k, v in kwargs.items() if k not in ("sweep_status", "sweep_json") and v not in (None, False)]
        if given:
            raise ConfigError("--status DIR takes no other option but --json: it only reads the sweep in DIR")
        if kwargs.get("sweep_json"):
            print(json.dumps(status_json(status), indent=2))
        else:
            print_status(status)
        return 0
    if kwargs.get("sweep_json"):
        raise ConfigError("--json goes with --status DIR (the status as JSON): drop it, or add --status DIR")
    settings: dict = {}
    if kwargs.get("sweep_file") is not None:
        settings = read_sweep_file(kwargs["sweep_file"])
    for key, target in (("sweep_models", "models"), ("sweep_revisions", "revisions"), ("sweep_suites", "suites"),
                        ("sweep_out", "out")):
        if kwargs.get(key) is not None:
            settings[target] = kwargs[key]
    for name in EXECUTOR_FIELDS:
        if kwargs.get(f"sweep_{name}") is not None:
            settings[name] = kwargs[f"sweep_{name}"]
    options = dict(settings.pop("options", {}) or {})
    specs = option_specs()
    options.update({k: v for k, v in kwargs.items() if k in specs and v is not None})
    settings.setdefault("models", None)
    settings.setdefault("out", None)
    sweep = build_sweep(options=options, **settings)
    if kwargs.get("sweep_dry_run"):
        _check_out(sweep.out)
        for job in sweep.jobs:
            print(f"{job['model']}{'@' + job['revision'] if job['revision'] else ''} -> {sweep.out / job['run_dir']}")
        print(f"{len(sweep.jobs)} job(s), suites {sweep.spec['suites']}, executor {sweep.executor.executor}")
        if sweep.executor.executor == "slurm":
            print(slurm_script(_slurm_executor(sweep), len(sweep.jobs)))
        return 0
    return run_sweep(sweep, quiet=bool(kwargs.get("quiet")), on_inline=on_inline)
