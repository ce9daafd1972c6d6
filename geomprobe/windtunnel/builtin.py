"""Built-in wind-tunnel models: `windtunnel-bijection`, `windtunnel-hmm`, `windtunnel-sula`.

They load like any model (`geomprobe run --model windtunnel-sula`). If one is not in the cache
(`$GEOMPROBE_CACHE/windtunnels`, default ~/.cache/geomprobe), it is trained on first use with a
fixed recipe and seed, announced in one line with the expected time. The recipe's step budget can
be overridden with GEOMPROBE_WINDTUNNEL_STEPS (tests use a few steps; the fingerprint changes, so
such a model never replaces the real one).

First-use training runs under a per-task lock (`windtunnels/.locks/<task>`): a second process that
needs the same wind tunnel waits for the first and then uses its model. Training goes into a
staging directory `windtunnels/.<task>-XXXX`, moved into place when complete; it is removed on
any error or Ctrl-C, and one left by a killed process is removed by the next call. The cached
directory gets the modes a plain mkdir would (0o777 & ~umask: 0755 under umask 022), files
0o666 & ~umask, so other users of a shared cache can read it.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

from geomprobe.errors import RunDirectoryError
from geomprobe.locks import LOCK_NAME, DirectoryLock
from geomprobe.paths import cache_dir
from geomprobe.rundir import fingerprint

from .models import TransformerSpec
from .train import TrainConfig

RECIPE_VERSION = "1"
LOCK_POLL_S = 0.5  # how often a process waiting for another's first-use training retries the lock

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


def _complete(path: Path) -> bool:
    return (path / "config.json").exists() and (path / "metrics.json").exists()


def training_lock(task: str) -> DirectoryLock:
    """The lock a process holds while it trains the built-in wind tunnel for `task`."""
    return DirectoryLock(cache_dir() / "windtunnels" / ".locks" / task, what=f"windtunnel-{task} training")


def _acquire_waiting(lock: DirectoryLock, task: str) -> None:
    """Acquire `lock`, waiting (with one line saying for whom) while another process holds it."""
    announced = False
    while True:
        try:
            lock.acquire()
            return
        except RunDirectoryError:
            if not announced:
                try:
                    holder = lock.file.read_text(errors="replace").strip() or "pid unknown"
                except OSError:
                    holder = "pid unknown"
                print(f"waiting for another geomprobe process training windtunnel-{task} ({holder})", file=sys.stderr)
                announced = True
            time.sleep(LOCK_POLL_S)


def remove_stale_staging(task: str, parent: Path) -> list[Path]:
    """Remove the staging directories (`.<task>-XXXX`) a killed process left in parent. Only safe
    while holding training_lock(task): then no live process is training into one."""
    removed = []
    for staging in parent.glob(f".{task}-*"):
        if staging.is_dir() and not staging.is_symlink():
            shutil.rmtree(staging, ignore_errors=True)
            removed.append(staging)
    return removed


def ensure_windtunnel(task: str, progress: bool = True) -> Path:
    """Path of the trained wind-tunnel model for `task`, training it first if it is not cached."""
    path = windtunnel_dir(task)
    if _complete(path):
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = training_lock(task)
    _acquire_waiting(lock, task)
    try:
        if _complete(path):  # the process we waited for trained it
            return path
        remove_stale_staging(task, path.parent)
        return _train_into_cache(task, path, progress)
    finally:
        lock.release()


def _train_into_cache(task: str, path: Path, progress: bool) -> Path:
    from rich.console import Console

    from .train import share_modes, train, umask

    config = recipe(task)
    speed = RECIPES[task][1]
    Console(stderr=True).print(
        f"windtunnel-{task} is not in {path.parent}: training it now ({config.steps} steps, about "
        f"{max(1, round(config.steps / speed / 60))} min on 2 CPU cores; once only)")
    staging = Path(tempfile.mkdtemp(prefix=f".{task}-", dir=path.parent))
    try:
        os.chmod(staging, 0o777 & ~umask())  # mkdtemp makes it 0700
        try:
            metrics = train(config, staging, progress=progress)
        except KeyboardInterrupt:
            raise KeyboardInterrupt(f"windtunnel-{task} training stopped; it is trained again from scratch on "
                                    "next use") from None
        (staging / LOCK_NAME).unlink(missing_ok=True)  # the lock train() held on the staging directory
        share_modes(staging)  # some writers make files 0600
        if path.exists():  # an incomplete directory (we hold the lock: nobody is writing it)
            shutil.rmtree(path)
        os.replace(staging, path)
        score = metrics["eval"]["train_length"]
        Console(stderr=True).print(
            f"windtunnel-{task}: {metrics['steps']} steps in {metrics['train_seconds']:.0f} s; held-out entropy MAE "
            f"{score['entropy_mae_bits']:.4f} bits, KL(Bayes||model) {score['kl_bits']:.4f} bits, mass on feasible "
            f"answers {score['mass_on_feasible']:.4f} ({path / 'metrics.json'})")
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return path


def windtunnel_info(path: str | Path) -> dict | None:
    """The wind-tunnel description saved with a model directory, or None for other models."""
    info = Path(path) / "windtunnel.json"
    return json.loads(info.read_text()) if info.exists() else None
