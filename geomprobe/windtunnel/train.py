"""Training and evaluating wind-tunnel models (METHODS.md section 9).

Fresh batches every step (the task generators are infinite), cross-entropy on the sampled answer
at every supervised position (its minimiser is the exact Bayes predictive), AdamW with a short
warm-up and a cosine decay over the budget (steps, or wall-clock minutes). Checkpoints are kept
along the way for the frame-precision analysis; the final transformer is saved as a Hugging Face
GPT-NeoX directory with its word-level tokenizer, so geomprobe loads it like any model.

    from geomprobe.windtunnel.train import TrainConfig, train
    metrics = train(TrainConfig(task="sula", minutes=3), out_dir="runs/wt-sula")

One trainer per output directory (a `geomprobe.locks.DirectoryLock`), and its writes stay inside
that directory or geomprobe's cache (geomprobe.rundir.confined, as a run's do): a `checkpoints/`
that is a symbolic link is refused, or replaced with --overwrite. A directory that already
holds a run is refused unless `resume=True` (continue from its last saved state) or
`overwrite=True` (remove what a training run writes, TRAINING_OUTPUTS, and start afresh; other
files are kept). The resumable state, `checkpoints/state.pt`, holds the weights, the optimizer
state, the step (which fixes the LR schedule), the RNG states of torch and of the task sampler,
the elapsed time, the loss history and the remaining checkpoint schedule; it is saved at the start,
at every log-spaced checkpoint, every STATE_EVERY_S seconds, on Ctrl-C and at the end, always
atomically. With a step budget a resumed run ends with the same weights, bit for bit, as an
uninterrupted one (same thread count; a different one may change the low bits); with a minutes
budget the split between sessions is wall-clock, so it cannot.
"""

from __future__ import annotations

import fnmatch
import io
import logging
import math
import os
import shutil
import signal
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch

from geomprobe.analysis.windtunnel_metrics import score_against_bayes
from geomprobe.console import transformers_silenced
from geomprobe.errors import ConfigError, RunDirectoryError
from geomprobe.locks import LOCK_NAME, DirectoryLock
from geomprobe.rundir import (
    atomic_write_bytes,
    atomic_write_json,
    atomic_writer,
    confined,
    make_dirs,
    now,
    own_folder,
    package_versions,
    remove_path,
)

from .models import ARCHITECTURES, TransformerSpec, build
from .tasks import Task, make_task
from .tokenizer import task_tokenizer

log = logging.getLogger(__name__)

LOG2E = 1.4426950408889634
TARGETS = ("sampled", "bayes")
STATE = "state.pt"  # the resumable state, in checkpoints/
STATE_FORMAT = 1
STATE_EVERY_S = 60.0  # besides the checkpoint steps, the state is saved at least this often
# What a training run (and `windtunnel curves`) writes into its directory: --overwrite removes
# these and nothing else. Patterns, matched against top-level names.
TRAINING_OUTPUTS = ("checkpoints", "metrics.json", "windtunnel.json", "curves.json", "config.json",
                    "generation_config.json", "model.safetensors", "model-*-of-*.safetensors",
                    "model.safetensors.index.json", "pytorch_model.bin", "model.pt", "tokenizer.json",
                    "tokenizer_config.json", "special_tokens_map.json", "chat_template.jinja")
# config fields that do not change what is computed (besides the low bits, for threads)
_RESUMABLE_DIFFERENCES = ("threads",)


@dataclass
class TrainConfig:
    """What `windtunnel train` trains: the task and its options, the architecture and its shape, the
    budget (steps or minutes), the optimiser's schedule, the seed and the target (sampled tokens or
    the exact posterior)."""

    task: str = "sula"
    task_options: dict = field(default_factory=dict)
    arch: str = "transformer"
    spec: TransformerSpec = field(default_factory=TransformerSpec)
    steps: int | None = None  # budget in steps, or
    minutes: float | None = None  # in wall-clock minutes (one of the two; default 2000 steps)
    batch_size: int = 128
    lr: float = 2e-3
    min_lr_ratio: float = 0.05
    warmup_steps: int = 100
    weight_decay: float = 0.01
    seed: int = 0
    n_checkpoints: int = 10  # log-spaced over the budget (1% ... ), plus the final weights
    eval_sequences: int = 1024
    eval_lengths: list[int] | None = None  # None: the task's default (HMM adds 30 and 50)
    threads: int | None = None
    log_every: int = 10
    # "sampled": cross-entropy on the sampled answer (the papers' setting); "bayes": cross-entropy
    # against the exact predictive (same minimiser, far less gradient noise)
    target: str = "sampled"

    def budget(self) -> tuple[str, float]:
        """The training budget as ("steps", n) or ("minutes", m): 2,000 steps when neither is given;
        both given, or a non-positive value, is a ConfigError."""
        if self.steps is not None and self.minutes is not None:
            raise ConfigError("give a training budget in --steps or --minutes, not both")
        if self.minutes is not None:
            if not _number(self.minutes) or not 0 < self.minutes < math.inf:
                raise ConfigError(f"--minutes must be a positive number, got {self.minutes}")
            return "minutes", float(self.minutes)
        steps = 2000 if self.steps is None else self.steps
        if not _integer(steps) or steps < 1:
            raise ConfigError(f"--steps must be a positive integer, got {steps}")
        return "steps", float(steps)

    def summary(self) -> str:
        """One line of what this configuration trains: `transformer on sula, d_model 64, 3 layers, ...`."""
        kind, budget = self.budget()
        return (f"{self.arch} on {self.task}, d_model {self.spec.d_model}, {self.spec.n_layers} layers, "
                f"{self.spec.n_heads} heads, d_mlp {self.spec.d_mlp}, lr {self.lr:g}, batch {self.batch_size}, "
                f"target {self.target}, {budget:g} {kind}, seed {self.seed}")

    def validate(self) -> None:
        """Raise ConfigError (one line naming the option) on any value training cannot use."""
        self.budget()
        if self.target not in TARGETS:
            raise ConfigError(f"unknown training target '{self.target}': choose sampled or bayes")
        if self.arch not in ARCHITECTURES:
            raise ConfigError(f"unknown architecture '{self.arch}': choose one of {', '.join(ARCHITECTURES)}")
        if not isinstance(self.spec, TransformerSpec):
            raise ConfigError(f"spec must be a TransformerSpec, got {type(self.spec).__name__}")
        self.spec.validate()
        for name, value, low in (("--batch-size", self.batch_size, 1), ("--seed", self.seed, 0),
                                 ("warmup_steps", self.warmup_steps, 0), ("n_checkpoints", self.n_checkpoints, 0),
                                 ("eval_sequences", self.eval_sequences, 1), ("log_every", self.log_every, 1)):
            if not _integer(value) or value < low:
                raise ConfigError(f"{name} must be an integer >= {low}, got {value}")
        if self.threads is not None and (not _integer(self.threads) or self.threads < 1):
            raise ConfigError(f"--threads must be a positive integer, got {self.threads}")
        if not _number(self.lr) or not 0 < self.lr < math.inf:
            raise ConfigError(f"--lr must be a positive number, got {self.lr}")
        if not _number(self.min_lr_ratio) or not 0 <= self.min_lr_ratio <= 1:
            raise ConfigError(f"min_lr_ratio must lie between 0 and 1, got {self.min_lr_ratio}")
        if not _number(self.weight_decay) or not 0 <= self.weight_decay < math.inf:
            raise ConfigError(f"weight_decay must be a non-negative number, got {self.weight_decay}")
        if not isinstance(self.task_options, dict):
            raise ConfigError(f"task_options must be a dict, got {type(self.task_options).__name__}")
        if self.eval_lengths is not None and (not isinstance(self.eval_lengths, list) or not self.eval_lengths or any(
                length is not None and (not _integer(length) or length < 1) for length in self.eval_lengths)):
            raise ConfigError(f"eval_lengths must be a non-empty list of positive lengths (or None), "
                              f"got {self.eval_lengths}")


def _integer(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _number(value) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool) \
        and not math.isnan(value)


def default_eval_lengths(task) -> list[int | None]:
    return [None, 30, 50] if task.name == "hmm" else [None]


def answer_probs(logits: torch.Tensor, answer_ids: torch.Tensor) -> torch.Tensor:
    """Full-vocabulary softmax read at the answer tokens: [batch, T, K] (not renormalised)."""
    return torch.softmax(logits.float(), dim=-1)[..., answer_ids]


def batch_entropy_mae(logits: torch.Tensor, bayes: torch.Tensor, supervised: torch.Tensor,
                      answer_ids: torch.Tensor) -> float:
    """Running entropy MAE (bits) on a training batch, averaged per sequence then over sequences."""
    with torch.no_grad():
        logp = torch.log_softmax(logits.float()[..., answer_ids], dim=-1)
        h_model = -(logp.exp() * logp).sum(-1) * LOG2E
        b = bayes.float()
        h_bayes = -(b * torch.where(b > 0, b.log(), torch.zeros_like(b))).sum(-1) * LOG2E
        err = (h_model - h_bayes).abs() * supervised
        counts = supervised.sum(1)
        keep = counts > 0
        return float((err.sum(1)[keep] / counts[keep]).mean())


def _tensors(batch, device="cpu"):
    return (torch.as_tensor(batch.tokens, device=device), torch.as_tensor(batch.targets, device=device),
            torch.as_tensor(batch.bayes, device=device), torch.as_tensor(batch.supervised, device=device))


@torch.no_grad()
def evaluate(module, task, n_sequences: int = 1024, seq_len: int | None = None, seed: int = 12345,
             batch_size: int = 256) -> dict:
    """Score `module` (tokens -> logits) on held-out sequences against the exact posterior."""
    module.eval()
    rng = np.random.default_rng(seed)
    answer_ids = torch.as_tensor(task.answer_ids)
    probs, bayes, supervised = [], [], []
    width = 0
    for start in range(0, n_sequences, batch_size):
        batch = task.sample(min(batch_size, n_sequences - start), rng, seq_len=seq_len)
        tokens = torch.as_tensor(batch.tokens)
        probs.append(answer_probs(module(tokens), answer_ids).numpy())
        bayes.append(batch.bayes)
        supervised.append(batch.supervised)
        width = max(width, tokens.shape[1])

    def pad(arrays, fill):
        return np.concatenate([np.pad(a, [(0, 0), (0, width - a.shape[1])] + [(0, 0)] * (a.ndim - 2),
                                      constant_values=fill) for a in arrays])

    score = score_against_bayes(pad(probs, 0.0), pad(bayes, 0.0), pad(supervised, False))
    result = score.to_dict()
    result["seq_len"] = seq_len or task.seq_len
    return result


def training_loss(logits, targets, bayes, supervised, answer_ids, target: str) -> torch.Tensor:
    if target == "sampled":
        return torch.nn.functional.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=-100)
    if target == "bayes":
        logp = torch.log_softmax(logits.float(), dim=-1)[..., answer_ids]  # [B, T, K]
        per_position = -(bayes.float() * logp).sum(-1)
        return (per_position * supervised).sum() / supervised.sum()
    raise ConfigError(f"unknown training target '{target}': choose sampled or bayes")


def _lr_factor(config: TrainConfig, step: int, fraction: float) -> float:
    warm = min(1.0, (step + 1) / max(1, config.warmup_steps))
    cosine = config.min_lr_ratio + (1 - config.min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * min(1.0, fraction)))
    return warm * cosine


def train(config: TrainConfig, out_dir: str | Path, progress: bool = True, *, resume: bool = False,
          overwrite: bool = False, interrupt_hint: str = "rerun with --resume to continue",
          recipe: str | None = None, until: int | None = None) -> dict:
    """Train, checkpoint, evaluate and save into out_dir. Returns the metrics dict (also in
    out_dir/metrics.json). progress: a bar on stderr. recipe: where the configuration's defaults
    came from (e.g. "windtunnel-sula's recipe"), recorded in metrics.json.

    until: stop once this many steps of the budget are done (a step budget only), save the state and
    return {"steps": step, "stopped_at": step, "done": False} without evaluating: a long training
    run in sessions (`--resume` continues it, bit for bit), or the first steps of a recipe checked
    against the weights it is known to give (the learning-rate schedule is the full budget's).

    out_dir must be new or empty, unless `resume` (continue the run there from its last saved state;
    a finished run is returned as it is) or `overwrite` (remove TRAINING_OUTPUTS there first). On
    Ctrl-C the state is saved at the step boundary and KeyboardInterrupt propagates with a message
    saying so, ending in `interrupt_hint` (the CLI prints it as one line)."""
    out_dir = Path(out_dir)
    config.validate()
    if resume and overwrite:
        raise ConfigError("pass --resume (continue the run) or --overwrite (start afresh), not both")
    kind, budget = config.budget()
    if until is not None:
        if kind != "steps":
            raise ConfigError("--until needs a step budget (--steps): with --minutes the stopping point is wall-clock")
        if not _integer(until) or until < 1:
            raise ConfigError(f"--until must be a positive number of steps, got {until}")
    task = make_task(config.task, **config.task_options)
    if out_dir.exists() and not out_dir.is_dir():
        raise RunDirectoryError(f"{out_dir} is a file, not a directory: choose another --out")
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise RunDirectoryError(f"cannot create the output directory {out_dir}: {err.strerror or err}") from None
    from geomprobe.paths import cache_dir

    with DirectoryLock(out_dir, what="wind-tunnel output"), confined(out_dir, cache_dir()):
        own_folder(out_dir / "checkpoints", overwrite, owner="training run")  # never written through a link
        saved = _prepare_out_dir(out_dir, config, resume, overwrite)
        if saved is not None and saved.get("done") and (out_dir / "metrics.json").exists():
            from geomprobe.readers import read_metrics

            metrics = read_metrics(out_dir / "metrics.json")
            if metrics.get("steps") == saved["step"]:
                log.info("%s: this training run is complete (%d steps); nothing to resume", out_dir, saved["step"])
                return metrics
        log.info("training %s%s%s", config.summary(), f" ({recipe})" if recipe else "",
                 f"; resuming at step {saved['step']}" if saved is not None else "")
        log.debug("training into %s", out_dir)
        return _train(config, task, kind, budget, out_dir, saved, progress, interrupt_hint, recipe, until)


def _train(config: TrainConfig, task, kind: str, budget: float, out_dir: Path, saved: dict | None, progress: bool,
           interrupt_hint: str, recipe: str | None = None, until: int | None = None) -> dict:
    threads = torch.get_num_threads()
    if config.threads:
        torch.set_num_threads(config.threads)
    try:
        return _train_steps(config, task, kind, budget, out_dir, saved, progress, interrupt_hint, recipe, until)
    finally:
        torch.set_num_threads(threads)  # a training's thread count must not outlive it (a notebook runs on)


def _train_steps(config: TrainConfig, task, kind: str, budget: float, out_dir: Path, saved: dict | None,
                 progress: bool, interrupt_hint: str, recipe: str | None, until: int | None) -> dict:
    eval_lengths = config.eval_lengths or default_eval_lengths(task)
    run, description = _start(config, task, eval_lengths, out_dir, saved)
    if saved is None:
        run.save_state()  # records the configuration, so even a run killed at once is resumable
    run.state_saved_at = time.perf_counter()
    bar = _progress_bar(config, task, progress)
    run.module.train()
    with _DeferredInterrupt() as interrupt, bar:
        stopped = _steps(run, bar, kind, budget, out_dir, interrupt, interrupt_hint, until)
    if stopped is not None:
        return stopped
    train_seconds = time.perf_counter() - run.started
    _save_checkpoint(run.module, run.checkpoint_dir, run.step, train_seconds, run.loss_value, run.mae)
    run.save_state(done=True)
    try:
        if interrupt.requested:  # a Ctrl-C during the last step, deferred past the loop
            raise KeyboardInterrupt
        return _finish(config, task, run.module, description, out_dir, eval_lengths, run.step, train_seconds,
                       run.loss_value, run.mae, run.history, run.resumes, recipe)
    except KeyboardInterrupt:
        raise KeyboardInterrupt(f"training finished ({run.step} steps, state saved) but was stopped while evaluating "
                                f"and saving the model: {interrupt_hint}") from None


@dataclass
class _Run:
    """A training run in progress: its model, optimizer and sampler, and where it stands."""

    config: TrainConfig
    task: Task
    module: torch.nn.Module
    optimizer: torch.optim.Optimizer
    rng: np.random.Generator
    answer_ids: torch.Tensor
    checkpoint_dir: Path
    checkpoint_at: list[float]
    history: list[dict]
    resumes: list[dict]
    step: int
    started: float  # perf_counter time at which the run's elapsed time is 0
    loss_value: float
    mae: float
    saved_step: int  # the step of the last saved state
    state_saved_at: float = 0.0  # perf_counter time of the last periodic state save

    def save_state(self, done: bool = False, rng_state=None, torch_rng=None) -> None:
        """Save the resumable state atomically (rng_state, torch_rng: RNG states to record instead of the current ones)."""
        self.saved_step = self.step
        _save_state(self.checkpoint_dir / STATE, {
            "format": STATE_FORMAT, "config": asdict(self.config), "step": self.step, "done": done,
            "elapsed_s": time.perf_counter() - self.started, "model": self.module.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "numpy_rng": self.rng.bit_generator.state if rng_state is None else rng_state,
            "torch_rng": torch.get_rng_state() if torch_rng is None else torch_rng,
            "checkpoint_at": self.checkpoint_at, "history": self.history, "loss": self.loss_value,
            "train_entropy_mae_bits": self.mae, "resumes": self.resumes, "saved": now()})


def _start(config: TrainConfig, task, eval_lengths: list, out_dir: Path, saved: dict | None) -> tuple[_Run, dict]:
    """Build the model, its optimizer and sampler from the seed, restored from `saved` when resuming."""
    max_len = max(task.max_tokens(length) for length in eval_lengths)
    module, description = build(config.arch, len(task.vocab), max_len, config.spec, config.seed)
    optimizer = torch.optim.AdamW(module.parameters(), lr=config.lr, betas=(0.9, 0.98),
                                  weight_decay=config.weight_decay)
    rng = np.random.default_rng(config.seed)
    answer_ids = torch.as_tensor(task.answer_ids)
    checkpoint_dir = make_dirs(out_dir / "checkpoints")
    if saved is None:
        # Log-spaced, so the early phase where attention patterns form is resolved (paper II).
        checkpoint_at = [float(x) for x in np.geomspace(0.01, 1.0, config.n_checkpoints + 1)[:-1]]
        history, resumes, step, elapsed = [], [], 0, 0.0
        loss_value = mae = float("nan")
    else:
        module.load_state_dict(saved["model"])
        optimizer.load_state_dict(saved["optimizer"])
        rng.bit_generator.state = saved["numpy_rng"]
        torch.set_rng_state(saved["torch_rng"])
        checkpoint_at, history, step, elapsed = (list(saved["checkpoint_at"]), list(saved["history"]), saved["step"],
                                                 saved["elapsed_s"])
        loss_value, mae = saved["loss"], saved["train_entropy_mae_bits"]
        resumes = [*saved.get("resumes", []), {"step": step, "at": now()}]
        for stale in checkpoint_dir.glob("step-*.pt"):  # written after the saved state by the interrupted session
            if _checkpoint_step(stale) is not None and _checkpoint_step(stale) > step:
                remove_path(stale)
    run = _Run(config, task, module, optimizer, rng, answer_ids, checkpoint_dir, checkpoint_at, history, resumes, step,
               time.perf_counter() - elapsed, loss_value, mae, saved_step=step)
    return run, description


def _progress_bar(config: TrainConfig, task, progress: bool):
    """The training bar on stderr (rich.progress.Progress, not started): step, loss and entropy MAE."""
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    columns = [TextColumn(f"[bold]train[/] {config.arch} on {task.name}"), BarColumn(),
               TextColumn("step {task.fields[step]}  loss {task.fields[loss]:.4f}  "
                          "entropy MAE {task.fields[mae]:.4f} bits"), TimeElapsedColumn()]
    from geomprobe.console import in_notebook

    console = Console(stderr=True)
    if progress and (in_notebook() or not console.is_terminal):  # a log file, a pipe, Jupyter: plain lines
        return _TenthLines(f"train {config.arch} on {task.name}")
    return Progress(*columns, disable=not progress, console=console)


class _TenthLines:
    """The training bar's stand-in where no live bar can show (a log file, a pipe, a SLURM job's
    output): one plain line on stderr at every tenth of the budget and at the end, flushed, with
    the step, loss, entropy MAE and elapsed time (rich.progress.Progress's methods used here)."""

    def __init__(self, label: str):
        self.label, self.total, self.next_tenth, self.start = label, 1.0, 1, time.monotonic()
        self.fields: dict = {}
        self.printed_at = None  # the `completed` of the last line

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        if exc[0] is None and self.fields and self.fields.get("completed") != self.printed_at:
            self._line(self.fields.get("completed", 0))  # where it stopped (--until, a minutes budget)

    def add_task(self, description: str, total: float, completed: float = 0, **fields) -> int:
        self.total = float(total) or 1.0
        self.next_tenth = int(10 * completed / self.total) + 1  # a resumed run reports from where it stands
        self.fields = dict(fields, completed=completed)
        return 0

    def update(self, handle: int, completed: float, **fields) -> None:
        self.fields.update(fields, completed=completed)
        if completed >= self.next_tenth * self.total / 10:
            self._line(completed)
            self.next_tenth = int(10 * completed / self.total) + 1

    def _line(self, completed: float) -> None:
        import sys

        f, self.printed_at = self.fields, completed
        print(f"{self.label}: {100 * completed / self.total:.0f}% (step {f.get('step')}), loss {f.get('loss', 0):.4f}, "
              f"entropy MAE {f.get('mae', 0):.4f} bits, {time.monotonic() - self.start:.0f} s", file=sys.stderr,
              flush=True)


def _steps(run: _Run, bar, kind: str, budget: float, out_dir: Path, interrupt: _DeferredInterrupt,
           interrupt_hint: str, until: int | None) -> dict | None:
    """Optimizer steps until the budget is spent (None) or `until` is reached (the stopped run's summary)."""
    config = run.config
    # At a step boundary (`touched` False) the weights, the optimizer and the step agree, and
    # boundary_rng holds the RNG states before this step's batch was drawn.
    touched, boundary_step = False, run.step
    boundary_rng = (run.rng.bit_generator.state, torch.get_rng_state())
    start = (time.perf_counter() - run.started) / 60 if kind == "minutes" else run.step  # a resumed run's part done
    handle = bar.add_task("train", total=budget, completed=min(start, budget), step=run.step, loss=run.loss_value,
                          mae=run.mae)
    try:
        while True:
            touched, boundary_step = False, run.step
            boundary_rng = (run.rng.bit_generator.state, torch.get_rng_state())
            if interrupt.requested:
                raise KeyboardInterrupt
            elapsed = time.perf_counter() - run.started
            fraction = elapsed / (60 * budget) if kind == "minutes" else run.step / budget
            if fraction >= 1:
                return None
            if until is not None and run.step >= until:
                run.save_state()
                log.info("%s: stopped at step %d of %d, its state saved (--resume continues it)", out_dir, run.step,
                         int(budget))
                return {"steps": run.step, "stopped_at": run.step, "done": False}
            for group in run.optimizer.param_groups:
                group["lr"] = config.lr * _lr_factor(config, run.step, fraction)
            logits, loss, bayes, supervised = _backward(run)
            touched = True
            run.optimizer.step()
            run.step += 1
            if run.step % config.log_every == 0 or run.step == 1:
                _record(run, logits, loss, bayes, supervised)
            if _checkpoint_if_due(run, fraction) or time.perf_counter() - run.state_saved_at >= STATE_EVERY_S:
                run.save_state()
                run.state_saved_at = time.perf_counter()
            done = (time.perf_counter() - run.started) / 60 if kind == "minutes" else run.step
            bar.update(handle, completed=min(done, budget), step=run.step, loss=run.loss_value, mae=run.mae)
    except KeyboardInterrupt:
        if not touched:
            run.save_state(rng_state=boundary_rng[0], torch_rng=boundary_rng[1])
            where = f"training stopped at step {run.step}, its state saved"
        else:  # inside an optimizer step: the last periodic state stands
            where = (f"training stopped in the middle of step {boundary_step + 1}; its state saved at step "
                     f"{run.saved_step} stands")
        raise KeyboardInterrupt(f"{where}: {interrupt_hint}" if interrupt_hint else where) from None


def _backward(run: _Run) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Draw a fresh batch and backpropagate its loss, gradients clipped: (logits, loss, bayes, supervised)."""
    tokens, targets, bayes, supervised = _tensors(run.task.sample(run.config.batch_size, run.rng))
    logits = run.module(tokens)
    loss = training_loss(logits, targets, bayes, supervised, run.answer_ids, run.config.target)
    run.optimizer.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(run.module.parameters(), 1.0)
    return logits, loss, bayes, supervised


def _record(run: _Run, logits: torch.Tensor, loss: torch.Tensor, bayes: torch.Tensor, supervised: torch.Tensor) -> None:
    """Keep this step's loss and batch entropy MAE, and add them to the history."""
    run.loss_value = float(loss.detach())
    run.mae = batch_entropy_mae(logits, bayes, supervised, run.answer_ids)
    run.history.append({"step": run.step, "elapsed_s": round(time.perf_counter() - run.started, 3),
                        "loss": run.loss_value, "train_entropy_mae_bits": run.mae})


def _checkpoint_if_due(run: _Run, fraction: float) -> bool:
    """Save a checkpoint when the budget fraction has reached the next scheduled one; whether it did."""
    if not (run.checkpoint_at and fraction >= run.checkpoint_at[0]):
        return False
    _save_checkpoint(run.module, run.checkpoint_dir, run.step, time.perf_counter() - run.started, run.loss_value,
                     run.mae)
    while run.checkpoint_at and fraction >= run.checkpoint_at[0]:
        run.checkpoint_at.pop(0)
    return True


def _finish(config: TrainConfig, task, module, description: dict, out_dir: Path, eval_lengths: list, step: int,
            train_seconds: float, loss_value: float, mae: float, history: list, resumes: list,
            recipe: str | None = None) -> dict:
    evaluation = {("train_length" if length is None else f"length_{length}"):
                  evaluate(module, task, config.eval_sequences, length)
                  for length in eval_lengths}
    metrics = {
        "task": task.name, "task_options": config.task_options, "arch": config.arch, **description,
        "steps": step, "train_seconds": round(train_seconds, 2), "steps_per_second": round(step / train_seconds, 3),
        "final_train_loss": loss_value, "final_train_entropy_mae_bits": mae,
        "eval": evaluation, "history": history, "config": asdict(config), "recipe": recipe,
        "threads": torch.get_num_threads(),
        "resumed": resumes, "versions": package_versions(), "finished": now(),
    }
    _save_model(module, config, task, out_dir)
    atomic_write_json(out_dir / "metrics.json", metrics)
    share_modes(out_dir, only_training_outputs=True)
    return metrics


class _DeferredInterrupt:
    """While active (main thread, Python's default SIGINT handler in place), a first Ctrl-C only sets
    `requested`, so the training loop stops at a step boundary with a consistent state; a second one
    raises KeyboardInterrupt at once."""

    def __init__(self):
        self.requested = False
        self._installed = False

    def _handle(self, signum, frame) -> None:
        self.requested = True
        signal.signal(signal.SIGINT, signal.default_int_handler)

    def __enter__(self) -> _DeferredInterrupt:
        if threading.current_thread() is threading.main_thread():
            try:
                if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
                    signal.signal(signal.SIGINT, self._handle)
                    self._installed = True
            except (ValueError, OSError):  # pragma: no cover - embedded interpreters
                pass
        return self

    def __exit__(self, *exc) -> None:
        if self._installed:
            signal.signal(signal.SIGINT, signal.default_int_handler)


def is_training_output(name: str) -> bool:
    """Whether a top-level name in an output directory is something a training run writes (or the
    temporary file of one, left by a killed process)."""
    return any(fnmatch.fnmatchcase(name, pattern) or fnmatch.fnmatchcase(name, f".{pattern}.*")
               for pattern in TRAINING_OUTPUTS)


def load_state(out_dir: str | Path) -> dict | None:
    """The resumable state saved in out_dir/checkpoints (None if there is none)."""
    from geomprobe.files import regular_file
    from geomprobe.readers import TORCH_FILE

    path = Path(out_dir) / "checkpoints" / STATE
    if not path.exists() and not path.is_symlink():
        return None
    regular_file(path, TORCH_FILE, "pass --overwrite to start afresh")  # torch.load would block on a FIFO
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # a file from elsewhere, or damaged: atomic writes never leave half of one
        raise RunDirectoryError(f"{path} cannot be read as a training state ({type(err).__name__}): pass "
                                f"--overwrite to start afresh") from None


def _prepare_out_dir(out_dir: Path, config: TrainConfig, resume: bool, overwrite: bool) -> dict | None:
    """Refuse, clear or read out_dir (held under its lock). Returns the state to resume from, or None
    to start afresh."""
    names = sorted(p.name for p in out_dir.iterdir() if p.name != LOCK_NAME)
    ours = [name for name in names if is_training_output(name)]
    if overwrite:
        for name in ours:
            remove_path(out_dir / name)  # a link: the link only
        return None
    if resume:
        saved = load_state(out_dir)
        if saved is None:
            if ours:
                raise RunDirectoryError(f"{out_dir} holds a wind-tunnel training run without a resumable state "
                                        f"(no checkpoints/{STATE}: written by an older geomprobe): pass --overwrite "
                                        "to start afresh, or choose another --out")
            return None  # nothing there yet: --resume starts the run
        if saved.get("format") != STATE_FORMAT:
            raise RunDirectoryError(f"{out_dir}: checkpoints/{STATE} has format {saved.get('format')}, this geomprobe "
                                    f"reads {STATE_FORMAT}: pass --overwrite to start afresh")
        differences = _config_differences(saved["config"], asdict(config))
        if differences:
            raise RunDirectoryError(f"{out_dir} holds a training run with a different configuration (differs in: "
                                    f"{'; '.join(differences)}): resume with the same options, or pass --overwrite "
                                    "to start afresh, or choose another --out")
        # temporary files of atomic writes a killed process left (nobody else writes here: we hold the lock)
        for temp in [*(out_dir / name for name in ours if name.startswith(".")),
                     *(out_dir / "checkpoints").glob(".*.pt.*")]:
            if temp.is_file():
                remove_path(temp)
        return saved
    if ours:
        raise RunDirectoryError(f"{out_dir} already holds a wind-tunnel training run (metrics.json / checkpoints): "
                                "pass --resume to continue it from its last checkpoint, or --overwrite to start "
                                "afresh, or choose another --out")
    if names:
        shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
        raise RunDirectoryError(f"{out_dir} is not empty ({shown}): choose another --out, or pass --overwrite to "
                                "train into it (files a training run does not write are kept)")
    return None


def _config_differences(saved: dict, current: dict) -> list[str]:
    """'key old -> new' for each field that differs (one level into dicts: spec.d_model 32 -> 64)."""
    out = []
    for key in sorted(set(saved) | set(current)):
        a, b = saved.get(key), current.get(key)
        if key in _RESUMABLE_DIFFERENCES or a == b:
            continue
        if isinstance(a, dict) and isinstance(b, dict):
            out += [f"{key}.{sub} {a.get(sub)!r} -> {b.get(sub)!r}" for sub in sorted(set(a) | set(b), key=str)
                    if a.get(sub) != b.get(sub)]
        else:
            out.append(f"{key} {a!r} -> {b!r}")
    return out


def _checkpoint_step(path: Path) -> int | None:
    try:
        return int(path.stem.split("-", 1)[1])
    except (IndexError, ValueError):
        return None


def _torch_bytes(obj) -> bytes:
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    return buffer.getvalue()


def _save_state(path: Path, state: dict) -> None:
    atomic_write_bytes(path, _torch_bytes(state))


def _save_checkpoint(module, directory: Path, step: int, elapsed: float, loss: float, mae: float) -> None:
    atomic_write_bytes(directory / f"step-{step:07d}.pt", _torch_bytes(
        {"step": step, "elapsed_s": elapsed, "loss": loss, "train_entropy_mae_bits": mae,
         "state_dict": module.state_dict()}))


@transformers_silenced()  # no "Writing model shards" bar
def _save_model(module, config: TrainConfig, task, out_dir: Path) -> None:
    info = {"task": task.name, "task_options": config.task_options, "arch": config.arch,
            "vocab_size": len(task.vocab), "answer_ids": [int(i) for i in task.answer_ids]}
    if config.arch == "transformer":
        _save_pretrained(out_dir, module.model, task_tokenizer(task.vocab))
    else:
        atomic_write_bytes(out_dir / "model.pt", _torch_bytes(module.state_dict()))
    atomic_write_json(out_dir / "windtunnel.json", info)


SAVING = ".model.geomprobe-tmp"  # in checkpoints/: where save_pretrained writes before the files are moved


def _save_pretrained(out_dir: Path, *objects) -> None:
    """save_pretrained of each of `objects` (the model, its tokenizer) into out_dir, through
    geomprobe.rundir: transformers writes into a folder of the run's own (checkpoints/SAVING), then
    each file is written atomically into out_dir, so that a link in its place is replaced, never
    written through, and nothing lands outside the confinement."""
    scratch = out_dir / "checkpoints" / SAVING
    remove_path(scratch)  # left by a process killed while saving
    make_dirs(scratch)
    try:
        for obj in objects:
            obj.save_pretrained(scratch)
        for path in sorted(scratch.iterdir()):
            with path.open("rb") as source, atomic_writer(out_dir / path.name) as target:
                shutil.copyfileobj(source, target, 1 << 20)
    finally:
        remove_path(scratch)


def umask() -> int:
    """The process umask: from /proc on Linux, else by setting it and putting it back (which
    briefly changes it for other threads)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def share_modes(root: str | Path, only_training_outputs: bool = False) -> None:
    """Give what is below root (root included) the modes a plain mkdir or open would: 0o777 & ~umask
    for directories, 0o666 & ~umask for files (temporary files and some writers use 0o600/0o700).
    With only_training_outputs, just the top-level TRAINING_OUTPUTS and what is below them."""
    root = Path(root)
    mask = umask()
    dir_mode, file_mode = 0o777 & ~mask, 0o666 & ~mask
    tops = [p for p in root.iterdir() if is_training_output(p.name) and not p.name.startswith(".")] \
        if only_training_outputs else [root]
    for top in tops:
        paths = [top, *top.rglob("*")] if top.is_dir() and not top.is_symlink() else [top]
        for path in paths:
            if path.is_symlink():
                continue
            try:
                os.chmod(path, dir_mode if path.is_dir() else file_mode)
            except OSError:  # not ours to change (another user's file in a shared directory)
                pass
