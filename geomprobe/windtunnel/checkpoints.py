"""Reading back the checkpoints a wind-tunnel training run saved (for learning curves against
wall-clock time and the frame-precision analysis)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import torch

from .models import TransformerSpec, build
from .tasks import make_task
from .train import evaluate


def iter_checkpoints(run_dir: str | Path) -> Iterator[tuple[dict, torch.nn.Module]]:
    """(checkpoint info {step, elapsed_s, ...}, module with its weights) in training order."""
    run_dir = Path(run_dir)
    metrics = json.loads((run_dir / "metrics.json").read_text())
    config = metrics["config"]
    task = make_task(config["task"], **config["task_options"])
    lengths = config["eval_lengths"] or ([None, 30, 50] if task.name == "hmm" else [None])
    max_len = max(task.max_tokens(length) for length in lengths)
    for path in sorted((run_dir / "checkpoints").glob("step-*.pt")):
        saved = torch.load(path, map_location="cpu", weights_only=True)
        module, _ = build(config["arch"], len(task.vocab), max_len, TransformerSpec(**config["spec"]), config["seed"])
        module.load_state_dict(saved.pop("state_dict"))
        module.eval()
        yield saved, module


def learning_curve(run_dir: str | Path, n_sequences: int = 512) -> list[dict]:
    """Held-out entropy MAE and KL (bits) of every checkpoint, with its step and training time."""
    metrics = json.loads((Path(run_dir) / "metrics.json").read_text())
    task = make_task(metrics["config"]["task"], **metrics["config"]["task_options"])
    curve = []
    for info, module in iter_checkpoints(run_dir):
        score = evaluate(module, task, n_sequences)
        curve.append({"step": info["step"], "elapsed_s": round(info["elapsed_s"], 1),
                      "entropy_mae_bits": score["entropy_mae_bits"], "kl_bits": score["kl_bits"]})
    return curve
