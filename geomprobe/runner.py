"""`run(RunConfig)`: load a model, open its run directory, extract, and run one suite.

The CLI (`geomprobe run`) parses its options into a RunConfig and calls this; scripts can too:

    from geomprobe.runner import RunConfig, run
    run_dir = run(RunConfig(model="pythia-410m", suite="extract", dtype="bfloat16"))
"""

from __future__ import annotations

import random
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from geomprobe.errors import ConfigError
from geomprobe.models import DEFAULT_MODEL


@dataclass
class RunConfig:
    model: str = DEFAULT_MODEL
    suite: str = "extract"
    prompts: str | None = None  # JSONL or plain-text file; None: the built-in demo prompts
    out: str | None = None  # run directory; None: runs/<model>
    revision: str | None = None
    dtype: str = "float32"
    device: str = "auto"  # auto: cuda if available, else cpu
    device_map: str | None = None
    quantize: str | None = None
    backend: str = "hf"
    batch_size: int = 8
    seed: int = 0
    layers: list[int] | None = None
    readouts: list[str] = field(default_factory=lambda: ["values"])
    tokens: list[str] = field(default_factory=list)
    max_tokens: int | None = None
    overwrite: bool = False


def default_out(model: str) -> Path:
    slug = re.sub(r"[^A-Za-z0-9._@-]+", "_", model.strip("/")).strip("_") or "model"
    return Path("runs") / slug


def resolve_device(device: str) -> str:
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ConfigError(f"device '{device}' requested but torch sees no CUDA GPU: use --device cpu, or install "
                          "a CUDA build of torch")
    return device


def seed_everything(seed: int) -> None:
    import numpy as np
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def default_prompts(loaded, seed: int):
    """(prompts, description): a wind-tunnel model gets prompts sampled from its own task; any
    other model the built-in demo prompts."""
    from geomprobe.models.builtin import demo_prompts_path
    from geomprobe.prompts import read_prompts
    from geomprobe.windtunnel.builtin import windtunnel_info

    info = windtunnel_info(loaded.source)
    if info is None:
        return read_prompts(demo_prompts_path()), str(demo_prompts_path())
    from geomprobe.windtunnel.prompts import task_prompts
    from geomprobe.windtunnel.tasks import make_task

    task = make_task(info["task"], **info.get("task_options", {}))
    position = "random" if task.name in ("bijection", "hmm") else "last"
    return (task_prompts(task, n=200, seed=seed, position=position),
            f"windtunnel:{task.name} (200 sampled sequences cut at the {position} supervised position, seed {seed})")


def run(config: RunConfig, progress: bool = True) -> Path:
    """Run `config.suite` and return the run directory. Reruns of the same configuration resume."""
    from geomprobe.extraction import ExtractionConfig
    from geomprobe.models import load_model
    from geomprobe.prompts import prompts_hash, read_prompts
    from geomprobe.rundir import RunDirectory, now
    from geomprobe.suites import get_suite

    suite = get_suite(config.suite)
    prompts = read_prompts(config.prompts) if config.prompts else None
    device = resolve_device(config.device)
    seed_everything(config.seed)
    loaded = load_model(config.model, dtype=config.dtype, device=device, device_map=config.device_map,
                        quantize=config.quantize, revision=config.revision)
    prompt_source = config.prompts
    if prompts is None:
        prompts, prompt_source = default_prompts(loaded, config.seed)
    extraction_config = ExtractionConfig(layers=config.layers, readouts=tuple(config.readouts),
                                         tokens=list(config.tokens), backend=config.backend,
                                         max_tokens=config.max_tokens, batch_size=config.batch_size)
    fingerprint_config = {
        "model": config.model, "revision": loaded.revision, "dtype": config.dtype, "quantize": config.quantize,
        "seed": config.seed, "prompts_sha256": prompts_hash(prompts), **extraction_config.fingerprint_fields(),
    }
    run_dir = RunDirectory(config.out or default_out(config.model))
    manifest = run_dir.open(fingerprint_config, overwrite=config.overwrite, extra={
        "run_config": asdict(config),
        "model": loaded.describe(),
        "backend": config.backend,
        "seed": config.seed,
        "prompts": {"source": prompt_source, "n": len(prompts), "sha256": prompts_hash(prompts)},
    })
    manifest["suites"][config.suite] = {"status": "running", "started": now()}
    run_dir.write_manifest(manifest)
    suite(loaded=loaded, prompts=prompts, extraction_config=extraction_config, run_dir=run_dir,
          progress=progress)
    manifest = run_dir.read_manifest()
    manifest["suites"][config.suite].update(status="complete", ended=now())
    manifest.update(status="complete", ended=now())
    run_dir.write_manifest(manifest)
    return run_dir.path
