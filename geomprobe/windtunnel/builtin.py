"""Built-in wind-tunnel models: `windtunnel-bijection`, `windtunnel-hmm`, `windtunnel-recall`, `windtunnel-sula`.

They load like any model (`geomprobe run --model windtunnel-sula`). The package ships the
reference tunnels the project trained with these recipes (geomprobe.windtunnel.reference: the
same weights on every machine, checked against their SHA-256 on load). A tunnel the package does
not ship under the current recipe, and that is not in the cache (`$GEOMPROBE_CACHE/windtunnels`,
default ~/.cache/geomprobe), is trained on first use with the fixed recipe and seed, announced in
one line (logging INFO) with the expected time. The same
recipe is what `geomprobe windtunnel train --task TASK` trains by default (`recipe_config`). The
recipe's step budget can be overridden with GEOMPROBE_WINDTUNNEL_STEPS (tests use a few steps; the
fingerprint changes, so such a model never replaces the real one).

First-use training runs under a per-task lock (`windtunnels/.locks/<task>`): a second process that
needs the same wind tunnel waits for the first and then uses its model. Training goes into a
staging directory `windtunnels/.<task>-XXXX`, moved into place when complete; it is removed on
any error or Ctrl-C, and one left by a killed process is removed by the next call. The cached
directory gets the modes a plain mkdir would (0o777 & ~umask: 0755 under umask 022), files
0o666 & ~umask, so other users of a shared cache can read it.
"""

from __future__ import annotations

import logging
import os
import shutil
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

log = logging.getLogger(__name__)

RECIPE_VERSION = "1"
LOCK_POLL_S = 0.5  # how often a process waiting for another's first-use training retries the lock
LOCK_REPORT_S = 30.0  # how often it says it is still waiting

# task -> (training config, expected steps per second on 2 CPU cores, for the notice).
# Trained against the exact predictive (target="bayes"): same optimum as cross-entropy on sampled
# answers, but it reaches it far faster (SULA, 2 minutes: 0.003 vs 0.036 bits entropy MAE).
_SMALL = TransformerSpec(64, 3, 4, 256)
RECIPES: dict[str, tuple[TrainConfig, float]] = {
    "sula": (TrainConfig(task="sula", steps=1500, batch_size=128, lr=3e-3, target="bayes", spec=_SMALL, threads=1), 8.5),
    # bijection V=20: 0.0028 bits held-out after 1447 steps / 8 min (benchmarks/RESULTS.md)
    "bijection": (TrainConfig(task="bijection", steps=1500, batch_size=128, lr=3e-3, target="bayes",
                              spec=TransformerSpec(128, 4, 4, 512), threads=1), 3.0),
    # hmm: the papers' released task's shape (5 states, 5 symbols, 15 observations, matrices to 2
    # decimals with a 0.05 floor) and budget (about 8,000 steps at batch 64); scored at 1.5x and
    # 2.5x the training length too
    "hmm": (TrainConfig(task="hmm", task_options={"length": 15, "levels": 100, "floor": 0.05}, steps=8000,
                        batch_size=64, lr=1e-3, warmup_steps=200, target="bayes", spec=TransformerSpec(128, 4, 4, 512),
                        threads=1, eval_lengths=[None, 23, 38], log_every=50), 1.9),
    # recall, 8 pairs over 32 keys and 32 values: two layers suffice for the lookup (a head that
    # copies each key onto its value, a head that matches the probe to it). Trained on all 8 pairs
    # the model sits at "one of the shown values" (3 bits) for 6,500 steps and more; the recipe
    # trains on 1..8 pairs (min_pairs 1) and is scored on 8 (length 19) as well
    "recall": (TrainConfig(task="recall", task_options={"min_pairs": 1}, steps=15000, batch_size=128, lr=2e-3,
                           warmup_steps=200, target="bayes", spec=TransformerSpec(64, 2, 4, 256), threads=1,
                           eval_lengths=[None, 19], log_every=50), 8.0),
}


def recipe(task: str) -> TrainConfig:
    config, _ = RECIPES[task]
    config = TrainConfig(**{**asdict(config), "spec": TransformerSpec(**asdict(config.spec))})
    override = os.environ.get("GEOMPROBE_WINDTUNNEL_STEPS")
    if override:
        config.steps = int(override)
    return config


def recipe_config(task: str, *, steps: int | None = None, minutes: float | None = None,
                  d_model: int | None = None, n_layers: int | None = None, n_heads: int | None = None,
                  task_options: dict | None = None, **given) -> tuple[TrainConfig, str]:
    """The configuration `geomprobe windtunnel train` trains: the built-in recipe of `task` (RECIPES,
    the one `--model windtunnel-TASK` trains on first use, without the GEOMPROBE_WINDTUNNEL_STEPS
    test override), or TrainConfig's defaults for a task without one, with every option given (not
    None) in its place. --minutes replaces the recipe's step budget; --d-model sets the MLP width to
    4 d_model. Returns (config, where the defaults came from: "windtunnel-sula's recipe" or
    "TrainConfig's defaults")."""
    base, origin = (RECIPES[task][0], f"windtunnel-{task}'s recipe") if task in RECIPES else \
        (TrainConfig(task=task), "TrainConfig's defaults")
    fields = {**asdict(base), "task": task, "spec": TransformerSpec(**asdict(base.spec))}
    fields["task_options"] = {**base.task_options, **(task_options or {})}
    fields.update({name: value for name, value in given.items() if value is not None})
    if steps is not None or minutes is not None:
        fields.update(steps=steps, minutes=minutes)
    spec = fields["spec"]

    def chosen(value, default):
        return default if value is None else value

    fields["spec"] = TransformerSpec(chosen(d_model, spec.d_model), chosen(n_layers, spec.n_layers),
                                     chosen(n_heads, spec.n_heads), spec.d_mlp if d_model is None else 4 * d_model)
    return TrainConfig(**fields), origin


def recipe_key(task: str) -> str:
    """What names a trained tunnel: the recipe version and every field of the recipe (with the
    GEOMPROBE_WINDTUNNEL_STEPS override applied, so a test's short model never passes for the real one)."""
    return f"{task}-{fingerprint([RECIPE_VERSION, asdict(recipe(task))])[:10]}"


def shipped_tunnel(task: str):
    """The reference tunnel the package ships for `task` under the current recipe, or None."""
    from .reference import shipped

    return shipped(task, recipe_key(task)) if task in RECIPES else None


def windtunnel_dir(task: str) -> Path:
    """Where `windtunnel-TASK` is (or will be, once trained): the package's shipped directory when
    it ships this recipe's tunnel, else the cache."""
    entry = shipped_tunnel(task)
    if entry is not None:
        from .reference import shipped_dir

        return shipped_dir(task)
    return cache_dir() / "windtunnels" / recipe_key(task)


def _complete(path: Path) -> bool:
    return (path / "config.json").exists() and (path / "metrics.json").exists()


def is_cached(task: str) -> bool:
    """Whether `windtunnel-TASK` loads without training: the package ships it, or its model under
    the current recipe is in the cache (what ensure_windtunnel checks)."""
    return _complete(windtunnel_dir(task))


def is_shipped(task: str) -> bool:
    return shipped_tunnel(task) is not None


def training_lock(task: str) -> DirectoryLock:
    """The lock a process holds while it trains the built-in wind tunnel for `task`."""
    return DirectoryLock(cache_dir() / "windtunnels" / ".locks" / task, what=f"windtunnel-{task} training")


def _acquire_waiting(lock: DirectoryLock, task: str) -> None:
    """Acquire `lock`, waiting while another process holds it: a line saying for whom, then one
    every LOCK_REPORT_S with the time waited so far."""
    started, reported = time.monotonic(), None
    while True:
        try:
            lock.acquire()
            if reported is not None:
                log.info("windtunnel-%s: the other process finished after %.0f s of waiting", task,
                         time.monotonic() - started)
            return
        except RunDirectoryError:
            waited = time.monotonic() - started
            if reported is None or waited - reported >= LOCK_REPORT_S:
                try:
                    holder = lock.file.read_text(errors="replace").strip() or "pid unknown"
                except OSError:
                    holder = "pid unknown"
                log.info("waiting for another geomprobe process training windtunnel-%s (%s): %.0f s so far", task,
                         holder, waited)
                reported = waited
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


def ensure_windtunnel(task: str, progress: bool | None = None) -> Path:
    """Path of the trained wind-tunnel model for `task`, training it first if it is not cached.
    progress: the training bar on stderr; None (model loading) shows it when geomprobe's INFO
    records are shown (the command line without --quiet), so plain Python prints nothing."""
    from geomprobe.console import logging_enabled

    entry = shipped_tunnel(task)
    if entry is not None:  # identical everywhere: checked against its SHA-256s, never retrained
        from .reference import verify

        return verify(entry)
    path = windtunnel_dir(task)
    if _complete(path):
        log.debug("windtunnel-%s: cached in %s", task, path)
        return path
    progress = logging_enabled() if progress is None else progress
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
    from .train import share_modes, train, umask

    config = recipe(task)
    speed = RECIPES[task][1]
    log.info("windtunnel-%s is not in %s: training it now (%d steps, about %d min on 2 CPU cores; once only)",
             task, path.parent, config.steps, max(1, round(config.steps / speed / 60)))
    staging = Path(tempfile.mkdtemp(prefix=f".{task}-", dir=path.parent))
    try:
        os.chmod(staging, 0o777 & ~umask())  # mkdtemp makes it 0700
        try:
            overridden = ", steps from GEOMPROBE_WINDTUNNEL_STEPS" if os.environ.get("GEOMPROBE_WINDTUNNEL_STEPS") else ""
            metrics = train(config, staging, progress=progress, recipe=f"windtunnel-{task}'s recipe{overridden}")
        except KeyboardInterrupt:
            raise KeyboardInterrupt(f"windtunnel-{task} training stopped; it is trained again from scratch on "
                                    "next use") from None
        (staging / LOCK_NAME).unlink(missing_ok=True)  # the lock train() held on the staging directory
        share_modes(staging)  # some writers make files 0600
        if path.exists():  # an incomplete directory (we hold the lock: nobody is writing it)
            shutil.rmtree(path)
        os.replace(staging, path)
        score = metrics["eval"]["train_length"]
        log.info("windtunnel-%s: %d steps in %.0f s; held-out entropy MAE %.4f bits, KL(Bayes||model) %.4f bits, "
                 "mass on feasible answers %.4f (%s)", task, metrics["steps"], metrics["train_seconds"],
                 score["entropy_mae_bits"], score["kl_bits"], score["mass_on_feasible"], path / "metrics.json")
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return path


def windtunnel_info(path: str | Path) -> dict | None:
    """The wind-tunnel description saved with a model directory, or None for other models."""
    from geomprobe.readers import read_windtunnel_info

    info = Path(path) / "windtunnel.json"
    return read_windtunnel_info(info) if info.exists() or info.is_symlink() else None
