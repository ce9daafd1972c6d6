"""Training and evaluating wind-tunnel models (PROTOCOL.md section 9).

Fresh batches every step (the task generators are infinite), cross-entropy on the sampled answer
at every supervised position (its minimiser is the exact Bayes predictive), AdamW with a short
warm-up and a cosine decay over the budget (steps, or wall-clock minutes). Checkpoints are kept
along the way for the frame-precision analysis; the final transformer is saved as a Hugging Face
GPT-NeoX directory with its word-level tokenizer, so geomprobe loads it like any model.

    from geomprobe.windtunnel.train import TrainConfig, train
    metrics = train(TrainConfig(task="sula", minutes=3), out_dir="runs/wt-sula")
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch

from geomprobe.analysis.windtunnel_metrics import score_against_bayes
from geomprobe.errors import ConfigError
from geomprobe.rundir import atomic_write_json, now, package_versions

from .models import TransformerSpec, build
from .tasks import make_task
from .tokenizer import task_tokenizer

LOG2E = 1.4426950408889634


@dataclass
class TrainConfig:
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
        if self.steps is not None and self.minutes is not None:
            raise ConfigError("give a training budget in --steps or --minutes, not both")
        if self.minutes is not None:
            if self.minutes <= 0:
                raise ConfigError("--minutes must be positive")
            return "minutes", float(self.minutes)
        steps = 2000 if self.steps is None else self.steps
        if steps < 1:
            raise ConfigError("--steps must be at least 1")
        return "steps", float(steps)


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


def train(config: TrainConfig, out_dir: str | Path, progress: bool = True) -> dict:
    """Train, checkpoint, evaluate and save into out_dir. Returns the metrics dict (also in
    out_dir/metrics.json)."""
    out_dir = Path(out_dir)
    kind, budget = config.budget()
    if config.target not in ("sampled", "bayes"):
        raise ConfigError(f"unknown training target '{config.target}': choose sampled or bayes")
    if config.threads:
        torch.set_num_threads(config.threads)
    task = make_task(config.task, **config.task_options)
    eval_lengths = config.eval_lengths or default_eval_lengths(task)
    max_len = max(task.max_tokens(length) for length in eval_lengths)
    module, description = build(config.arch, len(task.vocab), max_len, config.spec, config.seed)
    optimizer = torch.optim.AdamW(module.parameters(), lr=config.lr, betas=(0.9, 0.98),
                                  weight_decay=config.weight_decay)
    rng = np.random.default_rng(config.seed)
    answer_ids = torch.as_tensor(task.answer_ids)
    checkpoint_dir = out_dir / "checkpoints"
    checkpoint_dir.mkdir(parents=True, exist_ok=True)
    # Log-spaced, so the early phase where attention patterns form is resolved (paper II).
    checkpoint_at = list(np.geomspace(0.01, 1.0, config.n_checkpoints + 1)[:-1])
    history = []
    started = time.perf_counter()
    step = 0
    loss_value = mae = float("nan")

    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    columns = [TextColumn(f"[bold]train[/] {config.arch} on {task.name}"), BarColumn(),
               TextColumn("step {task.fields[step]}  loss {task.fields[loss]:.4f}  "
                          "entropy MAE {task.fields[mae]:.4f} bits"), TimeElapsedColumn()]
    module.train()
    with Progress(*columns, disable=not progress) as bar:
        handle = bar.add_task("train", total=budget, step=0, loss=float("nan"), mae=float("nan"))
        while True:
            elapsed = time.perf_counter() - started
            fraction = elapsed / (60 * budget) if kind == "minutes" else step / budget
            if fraction >= 1:
                break
            for group in optimizer.param_groups:
                group["lr"] = config.lr * _lr_factor(config, step, fraction)
            tokens, targets, bayes, supervised = _tensors(task.sample(config.batch_size, rng))
            logits = module(tokens)
            loss = training_loss(logits, targets, bayes, supervised, answer_ids, config.target)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(module.parameters(), 1.0)
            optimizer.step()
            step += 1
            if step % config.log_every == 0 or step == 1:
                loss_value = float(loss.detach())
                mae = batch_entropy_mae(logits, bayes, supervised, answer_ids)
                history.append({"step": step, "elapsed_s": round(time.perf_counter() - started, 3),
                                "loss": loss_value, "train_entropy_mae_bits": mae})
            if checkpoint_at and fraction >= checkpoint_at[0]:
                _save_checkpoint(module, checkpoint_dir, step, time.perf_counter() - started, loss_value, mae)
                while checkpoint_at and fraction >= checkpoint_at[0]:
                    checkpoint_at.pop(0)
            done = (time.perf_counter() - started) / 60 if kind == "minutes" else step
            bar.update(handle, completed=min(done, budget), step=step, loss=loss_value, mae=mae)
    train_seconds = time.perf_counter() - started
    _save_checkpoint(module, checkpoint_dir, step, train_seconds, loss_value, mae)

    evaluation = {("train_length" if length is None else f"length_{length}"):
                  evaluate(module, task, config.eval_sequences, length)
                  for length in eval_lengths}
    metrics = {
        "task": task.name, "task_options": config.task_options, "arch": config.arch, **description,
        "steps": step, "train_seconds": round(train_seconds, 2), "steps_per_second": round(step / train_seconds, 3),
        "final_train_loss": loss_value, "final_train_entropy_mae_bits": mae,
        "eval": evaluation, "history": history, "config": asdict(config), "threads": torch.get_num_threads(),
        "versions": package_versions(), "finished": now(),
    }
    _save_model(module, config, task, out_dir)
    atomic_write_json(out_dir / "metrics.json", metrics)
    return metrics


def _save_checkpoint(module, directory: Path, step: int, elapsed: float, loss: float, mae: float) -> None:
    path = directory / f"step-{step:07d}.pt"
    tmp = path.with_suffix(".tmp")
    torch.save({"step": step, "elapsed_s": elapsed, "loss": loss, "train_entropy_mae_bits": mae,
                "state_dict": module.state_dict()}, tmp)
    os.replace(tmp, path)


def _save_model(module, config: TrainConfig, task, out_dir: Path) -> None:
    info = {"task": task.name, "task_options": config.task_options, "arch": config.arch,
            "vocab_size": len(task.vocab), "answer_ids": [int(i) for i in task.answer_ids]}
    if config.arch == "transformer":
        module.model.save_pretrained(out_dir)
        task_tokenizer(task.vocab).save_pretrained(out_dir)
    else:
        torch.save(module.state_dict(), out_dir / "model.pt")
    atomic_write_json(out_dir / "windtunnel.json", info)
