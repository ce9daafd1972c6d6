"""`run(RunConfig, suites)`: load a model once, open its run directory, and run one or more suites.

The CLI (`geomprobe run`) parses its options into the same objects and calls this; scripts can too:

    from geomprobe import RunConfig, run
    from geomprobe.suites.sula import SulaConfig
    run_dir = run(RunConfig(model="pythia-410m", dtype="bfloat16"), ["geometry", SulaConfig(n_per_k=100)])
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable
from pathlib import Path

from geomprobe.config import RunConfig
from geomprobe.errors import ConfigError, GeomprobeError


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


def suite_configs(suites) -> list:
    """A suite name, a suite config, "a,b", "all", or a list of these -> suite configs in run order
    (registry order: extract, geometry, domain, sula, ablation, mechanisms)."""
    from geomprobe.suites import SUITES, SuiteConfig, get_suite, parse_suites

    items = [suites] if isinstance(suites, (str, SuiteConfig)) else list(suites)
    configs = {}
    for item in items:
        if isinstance(item, SuiteConfig):
            configs[item.suite] = item
        elif isinstance(item, str):
            for name in parse_suites(item):
                configs.setdefault(name, get_suite(name).config())
        else:
            raise ConfigError(f"a suite is a name or a suite config, not {type(item).__name__}")
    if not configs:
        raise ConfigError("no suite to run: give a suite name, e.g. 'extract'")
    return [configs[name] for name in SUITES if name in configs]


def _check_layers(config: RunConfig, adapter) -> None:
    for layer in config.layers or ():
        adapter.check_layer(layer)


def run(config: RunConfig, suites: str | object | Iterable = "extract", *, progress: bool = True,
        report: bool = False, skip_unsupported: bool | None = None) -> Path:
    """Run `suites` on `config.model` and return the run directory. Reruns of the same configuration
    resume: finished extraction batches and passes are kept.

    suites: a name ("sula"), several ("geometry,sula", "all"), suite configs (SulaConfig(n_per_k=50)),
    or a list of these. The model is loaded once for all of them. With "all" (or skip_unsupported),
    suites that cannot run on this model (the domain suite on a wind tunnel, sula on an encoder) are
    skipped and the manifest says why; a named suite that cannot run is an error.

    A run directory holds one model under one set of settings (its fingerprint); each suite keeps
    its own prompts and results under <run>/<suite>/, so suites can be added to a run one by one."""
    from geomprobe.models import load_model
    from geomprobe.options import as_dict
    from geomprobe.prompts import read_prompts
    from geomprobe.rundir import RunDirectory, now
    from geomprobe.suites import SuiteContext, get_suite

    if not isinstance(config, RunConfig):
        raise ConfigError(f"run() takes a RunConfig, not {type(config).__name__}")
    configs = suite_configs(suites)
    if skip_unsupported is None:
        skip_unsupported = isinstance(suites, str) and "all" in [s.strip() for s in suites.split(",")]
    prompts = read_prompts(config.prompts) if config.prompts else None
    device = resolve_device(config.device)
    seed_everything(config.seed)
    loaded = load_model(config.model, dtype=config.dtype, device=device, device_map=config.device_map,
                        quantize=config.quantize, revision=config.revision)
    _check_layers(config, loaded.adapter)
    run_dir = RunDirectory(config.out or default_out(config.model))
    manifest = run_dir.open(config.fingerprint(loaded.revision), overwrite=config.overwrite, extra={
        "model": loaded.describe(), "backend": config.backend, "dtype": config.dtype, "seed": config.seed})
    skipped = {}
    for options in configs:
        spec = get_suite(options.suite)
        why = spec.why_not(loaded, config)
        if why is not None and skip_unsupported:
            skipped[spec.name] = why
            manifest = run_dir.read_manifest()
            manifest["suites"][spec.name] = {"status": "skipped", "why": why}
            run_dir.write_manifest(manifest)
            if progress:
                print(f"{spec.name} suite skipped: {why}")
            continue
        manifest = run_dir.read_manifest()
        manifest["suites"][spec.name] = {"status": "running", "started": now(), "run_config": as_dict(config),
                                         "options": options.to_dict()}
        run_dir.write_manifest(manifest)
        ctx = SuiteContext(loaded=loaded, run=config, options=options, run_dir=run_dir, prompts=prompts,
                           progress=progress)
        try:
            spec.run(ctx)
        except BaseException as error:
            manifest = run_dir.read_manifest()
            status = "interrupted" if isinstance(error, KeyboardInterrupt) else "failed"
            manifest["suites"][spec.name].update(status=status, ended=now(), error=str(error).splitlines()[0]
                                                 if str(error) else type(error).__name__)
            manifest.update(status=status, ended=now())
            run_dir.write_manifest(manifest)
            if isinstance(error, GeomprobeError) and not str(error).startswith(f"{spec.name} suite"):
                raise type(error)(f"{spec.name} suite: {error}") from error
            raise
        manifest = run_dir.read_manifest()
        manifest["suites"][spec.name].update(status="complete", ended=now(), **ctx.used)
        run_dir.write_manifest(manifest)
    manifest = run_dir.read_manifest()
    manifest.update(status="complete", ended=now())
    run_dir.write_manifest(manifest)
    if report:
        from geomprobe.report import build_report

        build_report([run_dir.path], run_dir.path / "report.html")
    return run_dir.path
