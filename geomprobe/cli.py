"""The geomprobe command line: a thin layer that fills a RunConfig and calls the Python API."""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path
from typing import Optional

import typer

from geomprobe.errors import GeomprobeError
from geomprobe.models.registry import DEFAULT_MODEL
from geomprobe.console import table_console

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Measure the geometry of Bayesian inference in language models (see README.md).")
prompts_app = typer.Typer(no_args_is_help=True, help="Prompt files: list the built-in sets, validate a file.")
app.add_typer(prompts_app, name="prompts")
windtunnel_app = typer.Typer(no_args_is_help=True, help="Wind tunnels: train models on tasks with exact posteriors.")
app.add_typer(windtunnel_app, name="windtunnel")


def _quiet_libraries() -> None:
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    import transformers

    transformers.utils.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()


def user_errors(fn):
    """Print geomprobe's own errors as one line on stderr and exit 2, without a traceback."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except GeomprobeError as err:
            typer.secho(f"error: {err}", fg=typer.colors.RED, err=True)
            raise typer.Exit(2) from None

    return wrapper


def _int_list(text: Optional[str], option: str = "--layers") -> Optional[list[int]]:
    if text is None:
        return None
    from geomprobe.errors import ConfigError

    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise ConfigError(f"{option} takes comma-separated integers such as 0,5,11, not '{text}'") from None


def _str_list(text: Optional[str]) -> list[str]:
    return [] if not text else [part for part in text.split(",") if part]


@app.command()
@user_errors
def run(
    model: str = typer.Option(DEFAULT_MODEL, help="alias (see `geomprobe models`), alias@revision, hub id or local dir"),
    suite: str = typer.Option("extract", help="what to measure: extract | geometry | domain | sula | ablation | "
                                              "mechanisms"),
    prompts: Optional[Path] = typer.Option(None, help="prompt file (.jsonl records or plain text lines); "
                                                      "default: the built-in demo prompts"),
    out: Optional[Path] = typer.Option(None, help="run directory (default runs/<model>); a rerun resumes it"),
    revision: Optional[str] = typer.Option(None, help="hub revision, e.g. step0 (same as model@revision)"),
    dtype: str = typer.Option("float32", help="float32 | bfloat16 | float16"),
    device: str = typer.Option("auto", help="auto | cpu | cuda | cuda:1 ..."),
    device_map: Optional[str] = typer.Option(None, help="accelerate device map, e.g. auto (shards across GPUs)"),
    quantize: Optional[str] = typer.Option(None, help="4bit | 8bit (bitsandbytes)"),
    backend: str = typer.Option("hf", help="hf (geomprobe hooks) | tl (TransformerLens 4 bridge)"),
    batch_size: int = typer.Option(8, min=1, help="prompts per forward pass"),
    seed: int = typer.Option(0, help="seed for every random choice"),
    layers: Optional[str] = typer.Option(None, help="comma-separated layer indices (default: all; ablation: the "
                                                    "layers to intervene on, default by fraction of depth)"),
    readouts: str = typer.Option("values", help="comma-separated: values,z,resid"),
    tokens: Optional[str] = typer.Option(None, help="comma-separated single tokens whose next-token "
                                                    "probabilities to record, e.g. ' dax, lug'"),
    max_tokens: Optional[int] = typer.Option(None, help="keep only the last N tokens of longer prompts"),
    overwrite: bool = typer.Option(False, help="replace a run directory made with another configuration"),
    quiet: bool = typer.Option(False, help="no progress bar or summary table"),
    n_per_quintile: int = typer.Option(15, min=0, help="geometry/domain: prompts drawn per next-token-entropy "
                                                       "quintile (0: every candidate)", rich_help_panel="geometry"),
    corpus: str = typer.Option("mixed", help="geometry/domain: candidate corpus when --prompts is not given",
                               rich_help_panel="geometry"),
    domains: str = typer.Option("math,code,philosophy", help="domain: restricted corpora to compare with --corpus",
                                rich_help_panel="geometry"),
    readout: str = typer.Option("values", help="value manifold reads: values | z | resid",
                                rich_help_panel="geometry"),
    fold_ln: bool = typer.Option(False, help="key orthogonality with the preceding norm's scale folded into W_K",
                                 rich_help_panel="geometry"),
    token_keys: bool = typer.Option(False, help="also the token-key mode (E W_K for sampled tokens)",
                                    rich_help_panel="geometry"),
    init_seeds: int = typer.Option(3, min=0, help="freshly initialised copies for the key baseline",
                                   rich_help_panel="geometry"),
    step0: str = typer.Option("auto", help="untrained-checkpoint baseline: auto (Pythia step0) | off | a model "
                                           "spec", rich_help_panel="geometry"),
    n_boot: int = typer.Option(1000, min=10, help="bootstrap resamples for 95% CIs", rich_help_panel="geometry"),
    pc_threshold: float = typer.Option(0.30, rich_help_panel="verdict"),
    orth_threshold: float = typer.Option(0.20, rich_help_panel="verdict"),
    orth_layer_fraction: float = typer.Option(0.50, rich_help_panel="verdict"),
    focusing_threshold: float = typer.Option(0.30, rich_help_panel="verdict"),
    n_per_k: Optional[int] = typer.Option(None, help="sula: prompts per number of examples k (default 250; "
                                                     "ablation 100)", rich_help_panel="sula"),
    k_values: str = typer.Option("0,1,2,4,8", "--k", help="sula: comma-separated numbers of examples",
                                 rich_help_panel="sula"),
    alpha: float = typer.Option(0.9, help="sula: probability that an example's label is the latent label",
                                rich_help_panel="sula"),
    labels: Optional[str] = typer.Option(None, help="sula: two label words A,B (default: nonce words that are "
                                                    "single tokens of the model)", rich_help_panel="sula"),
    controls: str = typer.Option("all", help="sula: all | none | comma-separated lexical_remap, shuffled, "
                                             "carrier_mask, label_mask", rich_help_panel="sula"),
    target: str = typer.Option("posterior", help="sula: posterior (of the latent label) | predictive (of a fresh "
                                                 "noisy label)", rich_help_panel="sula"),
    template: Optional[str] = typer.Option(None, help="sula: prompt format with {examples} ('w: L' joined by ', ') "
                                                      "and {query}; default '{examples}. {query}:'",
                                           rich_help_panel="sula"),
    ops: str = typer.Option("cut,only,shift", help="ablation: comma-separated cut, only, shift (shift runs +1 and -1 "
                                                   "sigma_u)", rich_help_panel="ablation"),
    n_random: int = typer.Option(10, min=0, help="ablation: random axes per condition (controls)",
                                 rich_help_panel="ablation"),
    cut_lambda: float = typer.Option(1.0, "--lambda", help="ablation: cut strength (1 removes the axis)",
                                     rich_help_panel="ablation"),
    positions: str = typer.Option("all", help="ablation: edit values at all positions | final token only",
                                  rich_help_panel="ablation"),
    n_sequences: int = typer.Option(256, min=2, help="mechanisms: wind-tunnel sequences for Q-K alignment",
                                    rich_help_panel="mechanisms"),
    n_eval: int = typer.Option(1024, min=2, help="mechanisms: held-out sequences scoring each head/layer ablation",
                               rich_help_panel="mechanisms"),
    n_reference: int = typer.Option(256, min=2, help="mechanisms: sequences whose mean head outputs replace an "
                                                     "ablated head", rich_help_panel="mechanisms"),
    curves: str = typer.Option("auto", help="mechanisms: auto (frame-precision curves from the model's "
                                            "checkpoints, when it has them) | off", rich_help_panel="mechanisms"),
    report: bool = typer.Option(False, "--report", help="after the suite, write RUN_DIR/report.html "
                                                        "(same as `geomprobe report RUN_DIR`)"),
):
    """Run a suite on a model and write a run directory."""
    from geomprobe.runner import RunConfig
    from geomprobe.runner import run as run_suite

    _quiet_libraries()
    config = RunConfig(model=model, suite=suite, prompts=str(prompts) if prompts else None,
                       out=str(out) if out else None, revision=revision, dtype=dtype, device=device,
                       device_map=device_map, quantize=quantize, backend=backend, batch_size=batch_size,
                       seed=seed, layers=_int_list(layers), readouts=_str_list(readouts), tokens=_str_list(tokens),
                       max_tokens=max_tokens, overwrite=overwrite, n_per_quintile=n_per_quintile, corpus=corpus,
                       domains=_str_list(domains), readout=readout, fold_ln=fold_ln, token_keys=token_keys,
                       init_seeds=init_seeds, step0=step0, n_boot=n_boot, pc_threshold=pc_threshold,
                       orth_threshold=orth_threshold, orth_layer_fraction=orth_layer_fraction,
                       focusing_threshold=focusing_threshold, n_per_k=n_per_k,
                       k_values=_int_list(k_values, "--k"), alpha=alpha,
                       labels=_str_list(labels) if labels else None, controls=controls, target=target,
                       template=template, ops=ops, n_random=n_random, cut_lambda=cut_lambda, positions=positions,
                       n_sequences=n_sequences, n_eval=n_eval, n_reference=n_reference, curves=curves,
                       report=report)
    run_dir = run_suite(config, progress=not quiet)
    typer.echo(f"results: {run_dir}")
    if report:
        typer.echo(f"report: {run_dir / 'report.html'}")


@app.command()
@user_errors
def extract(
    model: str = typer.Option(DEFAULT_MODEL, help="alias, alias@revision, hub id or local dir"),
    prompts: Optional[Path] = typer.Option(None, help="prompt file (default: built-in demo prompts)"),
    out: Optional[Path] = typer.Option(None, help="run directory (default runs/<model>)"),
    dtype: str = typer.Option("float32"),
    device: str = typer.Option("auto"),
    device_map: Optional[str] = typer.Option(None),
    quantize: Optional[str] = typer.Option(None),
    backend: str = typer.Option("hf"),
    batch_size: int = typer.Option(8, min=1),
    seed: int = typer.Option(0),
    layers: Optional[str] = typer.Option(None),
    readouts: str = typer.Option("values"),
    tokens: Optional[str] = typer.Option(None),
    overwrite: bool = typer.Option(False),
    quiet: bool = typer.Option(False),
):
    """Same as `geomprobe run --suite extract`."""
    from geomprobe.runner import RunConfig
    from geomprobe.runner import run as run_suite

    _quiet_libraries()
    config = RunConfig(model=model, suite="extract", prompts=str(prompts) if prompts else None,
                       out=str(out) if out else None, dtype=dtype, device=device, device_map=device_map,
                       quantize=quantize, backend=backend, batch_size=batch_size, seed=seed, layers=_int_list(layers),
                       readouts=_str_list(readouts), tokens=_str_list(tokens), overwrite=overwrite)
    typer.echo(f"results: {run_suite(config, progress=not quiet)}")


@app.command()
@user_errors
def compare(
    run_dirs: list[Path] = typer.Argument(..., help="run directories with a finished geometry suite"),
    out: Optional[Path] = typer.Option(None, "-o", "--out", help="also write OUT.json and OUT.md"),
    basis: bool = typer.Option(False, help="also one PCA across the models over the prompts their geometry "
                                           "runs share (PROTOCOL section 2.7)"),
):
    """Cross-model table (paper III Table 2 layout) from existing run directories."""
    from geomprobe.compare import compare as build, print_table, shared_basis

    shared = shared_basis(run_dirs) if basis else None  # computed once: printed and written
    rows = build(run_dirs, out, basis=shared)
    print_table(rows)
    if shared is not None:
        typer.echo(f"cross-model basis over {shared['n_shared_prompts']} shared prompts: PC1 {shared['pc1']:.3f}, "
                   f"PC1+PC2 {shared['pc12']:.3f}; PC1 loading share "
                   + ", ".join(f"{Path(k).name} {v:.2f}" for k, v in shared["pc1_loading_share"].items()))
    if out is not None:
        typer.echo(f"table: {out.with_suffix('.md')}")


@app.command()
@user_errors
def report(
    run_dirs: list[Path] = typer.Argument(..., help="run directories (geomprobe run or windtunnel train outputs)"),
    out: Optional[Path] = typer.Option(None, "-o", "--out", help="HTML file (default reports/<first run>.html)"),
):
    """One self-contained HTML report (plotly, works offline) of one or more run directories."""
    from geomprobe.report import build_report

    path = build_report(run_dirs, out or Path("reports") / f"{run_dirs[0].resolve().name}.html")
    typer.echo(f"report: {path}")


@app.command()
@user_errors
def models():
    """List model aliases with family, layers, heads and kv heads, and whether each is cached locally."""
    from rich.console import Console
    from rich.table import Table

    from geomprobe.models import MODELS

    table = Table(title="geomprobe model aliases (any hub id or local directory works too)")
    for column in ("alias", "family", "layers", "heads", "kv heads", "width", "hub id", "cached", "note"):
        table.add_column(column)
    for info in MODELS.values():
        table.add_row(info.alias, info.family, *(str(x or "?") for x in (info.n_layers, info.n_heads,
                                                                         info.n_kv_heads, info.d_model)),
                      info.hub_id, _cached(info), info.note)
    Console(width=200).print(table)


def _cached(info) -> str:
    if info.hub_id.startswith("builtin:"):
        return "built-in"
    try:
        from huggingface_hub import try_to_load_from_cache

        hit = try_to_load_from_cache(info.hub_id, "config.json")
    except Exception:  # noqa: BLE001 - a cache probe must never break the listing
        return "?"
    return "yes" if isinstance(hit, str) else "no"


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
    from geomprobe.models.builtin import demo_prompts_path
    from geomprobe.prompts import read_prompts

    from geomprobe.corpora import CORPORA, corpus_path

    path = demo_prompts_path()
    typer.echo(f"demo        {len(read_prompts(path)):5d} prompts  {path}")
    for name in CORPORA:
        path = corpus_path(name)
        prompts = read_prompts(path)
        sources = sorted({p.source for p in prompts if p.source})
        typer.echo(f"{name:11} {len(prompts):5d} prompts  {path}  sources: {', '.join(sources)}")


@windtunnel_app.command("train")
@user_errors
def windtunnel_train(
    task: str = typer.Option("sula", help="bijection | hmm | recall | sula"),
    arch: str = typer.Option("transformer", help="transformer | lstm | mlp | mamba"),
    steps: Optional[int] = typer.Option(None, help="training budget in steps (default 2000)"),
    minutes: Optional[float] = typer.Option(None, help="training budget in wall-clock minutes"),
    seed: int = typer.Option(0),
    batch_size: int = typer.Option(128, min=1),
    lr: float = typer.Option(2e-3),
    target: str = typer.Option("sampled", help="sampled (cross-entropy on sampled answers, the papers') | bayes "
                                               "(against the exact predictive)"),
    d_model: int = typer.Option(128),
    n_layers: int = typer.Option(4),
    n_heads: int = typer.Option(4),
    vocab_n: Optional[int] = typer.Option(None, "--n", help="bijection size V (default 20)"),
    threads: Optional[int] = typer.Option(None, help="torch CPU threads (default: all cores)"),
    out: Optional[Path] = typer.Option(None, help="output directory (default runs/windtunnel-<task>-<arch>)"),
):
    """Train a wind-tunnel model; saves checkpoints, the model and metrics.json (Bayes scores)."""
    from geomprobe.windtunnel.models import TransformerSpec
    from geomprobe.windtunnel.train import TrainConfig, train

    _quiet_libraries()
    options = {"n": vocab_n} if vocab_n is not None else {}
    config = TrainConfig(task=task, task_options=options, arch=arch, steps=steps, minutes=minutes, seed=seed,
                         batch_size=batch_size, lr=lr, threads=threads, target=target,
                         spec=TransformerSpec(d_model, n_layers, n_heads, 4 * d_model))
    out_dir = out or Path("runs") / f"windtunnel-{task}-{arch}"
    metrics = train(config, out_dir)
    _print_windtunnel_metrics(metrics)
    typer.echo(f"model and metrics: {out_dir}")


@windtunnel_app.command("curves")
@user_errors
def windtunnel_curves(run_dir: Path = typer.Argument(..., help="a `windtunnel train` output directory"),
                      n_probe: int = typer.Option(128, help="probe sequences for attention patterns and values")):
    """Frame-precision dissociation across checkpoints: attention distance to the final checkpoint
    per layer vs value PC1 share and entropy MAE (writes RUN_DIR/curves.json)."""
    from rich.console import Console
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
    from rich.console import Console
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


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        typer.secho("interrupted: finished batches are saved; rerun the same command to resume", err=True)
        sys.exit(130)


if __name__ == "__main__":
    main()
