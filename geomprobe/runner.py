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
    # geometry and domain suites (PROTOCOL.md sections 2-6)
    n_per_quintile: int = 15  # stratified sampling: draws per entropy quintile (0: use every candidate)
    corpus: str = "mixed"  # candidate prompts when --prompts is not given (a corpus name, see `prompts list`)
    domains: list[str] = field(default_factory=lambda: ["math", "code", "philosophy"])
    readout: str = "values"  # what the value-manifold analysis reads: values | z | resid
    fold_ln: bool = False  # key orthogonality on W_K with the preceding norm's scale folded in
    token_keys: bool = False  # also the papers' token-key mode (E W_K for sampled tokens)
    init_seeds: int = 3  # freshly initialised copies for the key-orthogonality baseline
    step0: str = "auto"  # untrained checkpoint baseline: auto (Pythia's step0) | off | a model spec
    n_boot: int = 1000
    n_null: int = 200
    pc_threshold: float = 0.30
    orth_threshold: float = 0.20
    orth_layer_fraction: float = 0.50
    focusing_threshold: float = 0.30
    # sula suite (PROTOCOL.md section 7)
    n_per_k: int | None = None  # prompts per number of examples k; None: the suite's default (sula 250, ablation 100)
    k_values: list[int] = field(default_factory=lambda: [0, 1, 2, 4, 8])
    alpha: float = 0.9  # probability that an example's label equals the latent label
    labels: list[str] | None = None  # (L1, L2); None: chosen from nonce words that are single tokens
    controls: str | list[str] = "all"  # all | none | a list of lexical_remap, shuffled, carrier_mask, label_mask
    target: str = "posterior"  # posterior | predictive (H_bayes of the next noisy label)
    template: str | None = None  # prompt format with {examples} and {query}; None: "w1: L1, w2: L2. q:"
    # ablation suite (PROTOCOL.md section 8); also uses the sula settings above and `layers`
    ops: str | list[str] = "cut,only,shift"  # cut (z - lambda (z.u) u), only ((z.u) u), shift (z +- sigma_u u)
    n_random: int = 10  # random unit axes (orthogonal to u) per condition, the control distribution
    cut_lambda: float = 1.0  # cut strength; 0 leaves the values as they are
    positions: str = "all"  # all | final: edit the values at every position or at the final token only
    # mechanisms suite (issue 8); also uses init_seeds, n_boot and, on other models, the prompts
    n_sequences: int = 256  # wind-tunnel task sequences for Q-K alignment (every supervised position)
    n_eval: int = 1024  # held-out task sequences scoring each ablation against the exact posterior
    n_reference: int = 256  # task sequences whose per-position mean head outputs replace an ablated head
    curves: str = "auto"  # auto | off: frame-precision curves from the model directory's checkpoints
    report: bool = False  # after the suite, write <run>/report.html (geomprobe.report.build_report)


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


@dataclass
class SuiteContext:
    """What a suite gets: the loaded model, the run's configuration and directory, and the user's
    prompts (None when the suite should choose its own)."""

    loaded: object
    config: RunConfig
    run_dir: object  # geomprobe.rundir.RunDirectory
    prompts: list | None
    progress: bool = True

    def extraction_config(self, **overrides):
        from geomprobe.extraction import ExtractionConfig

        c = self.config
        fields = dict(layers=c.layers, readouts=tuple(c.readouts), tokens=list(c.tokens), backend=c.backend,
                      max_tokens=c.max_tokens, batch_size=c.batch_size)
        fields.update(overrides)
        return ExtractionConfig(**fields)

    def record_prompts(self, prompts, source: str, key: str = "prompts") -> None:
        """Note in the manifest which prompts this suite used (each suite may use its own)."""
        from geomprobe.prompts import prompts_hash

        manifest = self.run_dir.read_manifest()
        manifest["suites"][self.config.suite][key] = {"source": source, "n": len(prompts),
                                                       "sha256": prompts_hash(prompts)}
        self.run_dir.write_manifest(manifest)


def run(config: RunConfig, progress: bool = True) -> Path:
    """Run `config.suite` and return the run directory. Reruns of the same configuration resume.

    A run directory holds one model under one set of settings (its fingerprint); each suite keeps
    its own prompts and results under <run>/<suite>/, so suites can be added to a run one by one."""
    from geomprobe.models import load_model
    from geomprobe.prompts import read_prompts
    from geomprobe.rundir import RunDirectory, now
    from geomprobe.suites import get_suite

    suite = get_suite(config.suite)
    prompts = read_prompts(config.prompts) if config.prompts else None
    device = resolve_device(config.device)
    seed_everything(config.seed)
    loaded = load_model(config.model, dtype=config.dtype, device=device, device_map=config.device_map,
                        quantize=config.quantize, revision=config.revision)
    fingerprint_config = {
        "model": config.model, "revision": loaded.revision, "dtype": config.dtype, "quantize": config.quantize,
        "seed": config.seed, "backend": config.backend, "max_tokens": config.max_tokens,
    }
    run_dir = RunDirectory(config.out or default_out(config.model))
    manifest = run_dir.open(fingerprint_config, overwrite=config.overwrite, extra={
        "model": loaded.describe(),
        "backend": config.backend,
        "dtype": config.dtype,
        "seed": config.seed,
    })
    manifest["suites"][config.suite] = {"status": "running", "started": now(), "run_config": asdict(config)}
    run_dir.write_manifest(manifest)
    try:
        suite(SuiteContext(loaded=loaded, config=config, run_dir=run_dir, prompts=prompts, progress=progress))
    except ValueError as error:  # the analyses' input checks (too few prompts, no varying column, ...)
        raise ConfigError(f"{config.suite} suite: {error}") from error
    manifest = run_dir.read_manifest()
    manifest["suites"][config.suite].update(status="complete", ended=now())
    manifest.update(status="complete", ended=now())
    run_dir.write_manifest(manifest)
    if config.report:
        from geomprobe.report import build_report

        build_report([run_dir.path], run_dir.path / "report.html")
    return run_dir.path
