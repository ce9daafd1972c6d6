"""Built-in wind-tunnel models: `windtunnel-bijection`, `windtunnel-hmm`, `windtunnel-sula`.

They load like any model (`geomprobe run --model windtunnel-sula`). If one is not in the cache
(`$GEOMPROBE_CACHE/windtunnels`, default ~/.cache/geomprobe), it is trained on first use with a
fixed recipe and seed, announced in one line with the expected time. The recipe's step budget can
be overridden with GEOMPROBE_WINDTUNNEL_STEPS (tests use a few steps; the fingerprint changes, so
such a model never replaces the real one).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import asdict
from pathlib import Path

from geomprobe.paths import cache_dir
from geomprobe.rundir import fingerprint

from .models import TransformerSpec
from .train import TrainConfig

RECIPE_VERSION = "1"

# task -> (training config, expected steps per second on 2 CPU cores, for the notice).
# Trained against the exact predictive (target="bayes"): same optimum as cross-entropy on sampled
# answers, but it reaches it far faster (SULA, 2 minutes: 0.003 vs 0.036 bits entropy MAE).
_SMALL = TransformerSpec(64, 3, 4, 256)
RECIPES: dict[str, tuple[TrainConfig, float]] = {
    "sula": (TrainConfig(task="sula", steps=1500, batch_size=128, lr=3e-3, target="bayes", spec=_SMALL), 8.5),
    # bijection V=20: 0.0028 bits held-out after 1447 steps / 8 min (benchmarks/RESULTS.md)
    "bijection": (TrainConfig(task="bijection", steps=1500, batch_size=128, lr=3e-3, target="bayes",
                              spec=TransformerSpec(128, 4, 4, 512)), 3.0),
    # hmm: not yet benchmarked; sequences are ~1.8x longer than bijection's
    "hmm": (TrainConfig(task="hmm", steps=2000, batch_size=128, lr=3e-3, target="bayes",
                        spec=TransformerSpec(128, 4, 4, 512)), 1.6),
}


def recipe(task: str) -> TrainConfig:
    config, _ = RECIPES[task]
    config = TrainConfig(**{**asdict(config), "spec": TransformerSpec(**asdict(config.spec))})
    override = os.environ.get("GEOMPROBE_WINDTUNNEL_STEPS")
    if override:
        config.steps = int(override)
    return config


def windtunnel_dir(task: str) -> Path:
    config = recipe(task)
    return cache_dir() / "windtunnels" / f"{task}-{fingerprint([RECIPE_VERSION, asdict(config)])[:10]}"


def ensure_windtunnel(task: str, progress: bool = True) -> Path:
    """Path of the trained wind-tunnel model for `task`, training it first if it is not cached."""
    path = windtunnel_dir(task)
    if (path / "config.json").exists() and (path / "metrics.json").exists():
        return path
    config = recipe(task)
    speed = RECIPES[task][1]
    from rich.console import Console

    Console(stderr=True).print(
        f"windtunnel-{task} is not in {path.parent}: training it now ({config.steps} steps, about "
        f"{max(1, round(config.steps / speed / 60))} min on 2 CPU cores; once only)")
    from .train import train

    path.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{task}-", dir=path.parent))
    try:
        metrics = train(config, staging, progress=progress)
        os.replace(staging, path)
        score = metrics["eval"]["train_length"]
        Console(stderr=True).print(
            f"windtunnel-{task}: {metrics['steps']} steps in {metrics['train_seconds']:.0f} s; held-out entropy MAE "
            f"{score['entropy_mae_bits']:.4f} bits, KL(Bayes||model) {score['kl_bits']:.4f} bits, mass on feasible "
            f"answers {score['mass_on_feasible']:.4f} ({path / 'metrics.json'})")
    except OSError:
        if not (path / "config.json").exists():
            raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return path


def windtunnel_info(path: str | Path) -> dict | None:
    """The wind-tunnel description saved with a model directory, or None for other models."""
    info = Path(path) / "windtunnel.json"
    return json.loads(info.read_text()) if info.exists() else None
