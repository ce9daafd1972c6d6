"""Reading back the checkpoints a wind-tunnel training run saved (for learning curves against
wall-clock time and the frame-precision analysis): checkpoints/step-*.pt, each {step, elapsed_s,
loss, train_entropy_mae_bits, state_dict}. checkpoints/state.pt is the resumable training state
(geomprobe.windtunnel.train.load_state), not one of them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import torch

from .models import TransformerSpec, build
from .tasks import make_task
from .train import evaluate


def checkpoint_paths(run_dir: str | Path, final_step: int | None = None) -> list[Path]:
    """The run's step-*.pt files in training order, without any past final_step (a directory that an
    older geomprobe trained into twice can hold a longer run's checkpoints)."""
    from geomprobe.readers import read_checkpoint_index

    return list(read_checkpoint_index(run_dir, final_step).values())


def _config(metrics: dict, run_dir: Path) -> dict:
    """metrics.json's training config (schemas.TrainConfigRecord), or a one-line RunDirectoryError."""
    from geomprobe.errors import RunDirectoryError

    if not isinstance(metrics.get("config"), dict):
        raise RunDirectoryError(f"{run_dir / 'metrics.json'} has no training config: not a finished `geomprobe "
                                "windtunnel train` output; train it again")
    return metrics["config"]


def iter_checkpoints(run_dir: str | Path) -> Iterator[tuple[dict, torch.nn.Module]]:
    """(checkpoint info {step, elapsed_s, ...}, module with its weights) in training order."""
    from geomprobe.files import regular_file
    from geomprobe.readers import TORCH_FILE, read_metrics

    run_dir = Path(run_dir)
    metrics = read_metrics(run_dir / "metrics.json")
    config = _config(metrics, run_dir)
    task = make_task(config["task"], **config["task_options"])
    lengths = config["eval_lengths"] or ([None, 30, 50] if task.name == "hmm" else [None])
    max_len = max(task.max_tokens(length) for length in lengths)
    for path in checkpoint_paths(run_dir, metrics.get("steps")):
        saved = torch.load(regular_file(path, TORCH_FILE), map_location="cpu", weights_only=True)
        module, _ = build(config["arch"], len(task.vocab), max_len, TransformerSpec(**config["spec"]), config["seed"])
        module.load_state_dict(saved.pop("state_dict"))
        module.eval()
        yield saved, module


def learning_curve(run_dir: str | Path, n_sequences: int = 512) -> list[dict]:
    """Held-out entropy MAE and KL (bits) of every checkpoint, with its step and training time."""
    from geomprobe.readers import read_metrics

    metrics = read_metrics(Path(run_dir) / "metrics.json")
    config = _config(metrics, Path(run_dir))
    task = make_task(config["task"], **config["task_options"])
    curve = []
    for info, module in iter_checkpoints(run_dir):
        score = evaluate(module, task, n_sequences)
        curve.append({"step": info["step"], "elapsed_s": round(info["elapsed_s"], 1),
                      "entropy_mae_bits": score["entropy_mae_bits"], "kl_bits": score["kl_bits"]})
    return curve
