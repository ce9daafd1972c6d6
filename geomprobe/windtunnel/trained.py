"""A trained wind tunnel of any architecture, loaded from its training folder, and its last layer.

load_trained(directory) reads what geomprobe.windtunnel.train wrote (metrics.json with the
configuration; a transformer's Hugging Face folder, or the other architectures' model.pt; a
shipped reference tunnel's folder is the same) and returns the module (tokens -> logits), the task
and the metrics. untrained_copy(...) builds the same architecture freshly initialised, the control
for anything measured on the trained one. last_hidden(module, tokens) is the representation the
output head reads: the input of the final linear layer, for every architecture alike.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from geomprobe.errors import ConfigError

from .models import HFLogits, TransformerSpec, build
from .tasks import make_task


def _max_len(task, config: dict) -> int:
    lengths = config.get("eval_lengths") or ([None, 30, 50] if task.name == "hmm" else [None])
    return max(task.max_tokens(length) for length in lengths)


def _metrics(directory: Path) -> dict:
    from geomprobe.readers import read_metrics

    path = directory / "metrics.json"
    if not path.exists() and not path.is_symlink():
        raise ConfigError(f"{directory} holds no finished wind-tunnel training (no metrics.json): train it first")
    metrics = read_metrics(path)
    if not isinstance(metrics.get("config"), dict):
        raise ConfigError(f"{path} has no training config: not a finished `geomprobe windtunnel train` output; "
                          "train it again")
    return metrics


def load_trained(directory: str | Path):
    """(module, task, metrics) of a finished training folder or a shipped tunnel's folder."""
    directory = Path(directory)
    metrics = _metrics(directory)
    config = metrics["config"]
    task = make_task(config["task"], **config["task_options"])
    if (directory / "config.json").exists():
        from transformers import AutoModelForCausalLM

        module = HFLogits(AutoModelForCausalLM.from_pretrained(directory))
    elif (directory / "model.pt").exists():
        module = untrained_copy(metrics, seed=config["seed"])[0]
        from geomprobe.files import regular_file
        from geomprobe.readers import TORCH_FILE

        weights = regular_file(directory / "model.pt", TORCH_FILE)  # torch.load would block on a FIFO
        module.load_state_dict(torch.load(weights, map_location="cpu", weights_only=True))
    else:
        raise ConfigError(f"{directory} has metrics.json but no weights (config.json or model.pt)")
    module.eval()
    return module, task, metrics


def untrained_copy(metrics: dict, seed: int):
    """(module, task): the trained run's architecture and size, initialised from `seed`."""
    config = metrics["config"]
    task = make_task(config["task"], **config["task_options"])
    module, _ = build(config["arch"], len(task.vocab), _max_len(task, config), TransformerSpec(**config["spec"]), seed)
    module.eval()
    return module, task


def output_head(module) -> torch.nn.Module:
    """The final linear layer of a wind-tunnel module (the one that maps to the vocabulary)."""
    if isinstance(module, HFLogits):
        return module.model.get_output_embeddings()
    linears = [m for m in module.modules() if isinstance(m, torch.nn.Linear)]
    if not linears:
        raise ConfigError(f"{type(module).__name__} has no linear output layer")
    return linears[-1]


@torch.no_grad()
def last_hidden(module, tokens) -> np.ndarray:
    """The input of the output head at every position: float64 [batch, seq_len, width]."""
    seen = []
    handle = output_head(module).register_forward_pre_hook(lambda _m, args: seen.append(args[0].detach()))
    try:
        module(torch.as_tensor(tokens))
    finally:
        handle.remove()
    return seen[-1].double().numpy()
