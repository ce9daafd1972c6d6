"""RunConfig: what loads the model and drives extraction, shared by every suite of a run.

Each suite's own options live in its own config class (geomprobe.suites.<name>); the CLI builds
its options from both (geomprobe.cli), so every default below is written once.

    from geomprobe import RunConfig, run
    from geomprobe.suites.sula import SulaConfig
    run(RunConfig(model="pythia-410m", dtype="bfloat16"), [SulaConfig(n_per_k=100)])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from geomprobe.models.registry import DEFAULT_MODEL
from geomprobe.options import option, validate

# values: v = W_V x + b_V; z: the attention mix; resid: block output (before any final norm);
# hidden: transformers' hidden_states[l + 1], the last layer after the final norm (geomprobe.extraction)
READOUTS = ("values", "z", "resid", "hidden")
DEVICE_MAPS = ("auto", "balanced", "balanced_low_0", "sequential")
Readout = Literal["values", "z", "resid", "hidden"]


@dataclass
class RunConfig:
    """Model loading and extraction (METHODS.md sections 1 and 10)."""

    model: str = option(DEFAULT_MODEL, "alias (see `geomprobe models`), alias@revision, hub id or local directory "
                                       "(from Python also a model object: geomprobe.models.borrowed)")
    prompts: str | None = option(None, "prompt file (.jsonl records or plain text lines); default: each suite "
                                       "chooses its own (built-in demo prompts, corpora or a wind tunnel's task)")
    out: str | None = option(None, "run directory (default runs/<model>); a rerun resumes it")
    revision: str | None = option(None, "hub revision, e.g. step0 (same as model@revision)")
    dtype: Literal["float32", "bfloat16", "float16"] = option("float32", "weights and activations dtype")
    device: str = option("auto", "auto (cuda if available, else cpu) | cpu | cuda | cuda:1 | mps")
    device_map: str | None = option(None, "accelerate device map: auto | balanced | balanced_low_0 | sequential "
                                          "(shards one model across GPUs)")
    quantize: Literal["4bit", "8bit"] | None = option(None, "bitsandbytes quantisation")
    backend: Literal["hf", "tl"] = option("hf", "hf (geomprobe hooks) | tl (TransformerLens 4 bridge)")
    batch_size: int | None = option(None, "prompts per forward pass (default: 8 on a CPU; on a GPU the largest "
                                          "power of two up to 64 that fits, from `geomprobe plan`)", min=1)
    seed: int = option(0, "seed for every random choice", min=0, max=2**32 - 1)
    layers: tuple[int, ...] | None = option(None, "comma-separated layer indices (default: all; ablation: the "
                                                  "layers to intervene on, default by fraction of depth)")
    readouts: tuple[Readout, ...] = option(("values",), "comma-separated readouts to extract: values, z, resid "
                                                        "(block output, pre-norm), hidden (hidden_states, "
                                                        "last layer after the final norm; a suite adds the "
                                                        "ones it needs)")
    tokens: tuple[str, ...] = option((), "comma-separated single tokens whose next-token probabilities to record, "
                                         "e.g. ' dax, lug'", strip=False)
    max_tokens: int | None = option(None, "keep only the last N tokens of longer prompts", min=1)
    overwrite: bool = option(False, "replace a run directory made with another configuration")
    skip_plan_check: bool = option(False, "run even when `geomprobe plan` says the model and a batch do not fit "
                                          "the device's memory")

    def __post_init__(self):
        from geomprobe.models.borrowed import is_model_object

        held = self.model if is_model_object(self.model) else None
        if held is not None:  # a model object (or a LoadedModel): the run borrows it; the rest is checked as usual
            object.__setattr__(self, "model", "in-memory")
        validate(self)
        if held is not None:
            object.__setattr__(self, "model", held)

    def check(self) -> None:
        import re

        from geomprobe.errors import ConfigError

        if not re.fullmatch(r"auto|cpu|mps|cuda(:\d+)?", self.device):
            raise ConfigError(f"--device: unknown device '{self.device}'; choose auto, cpu, cuda, cuda:N or mps")
        if self.device_map is not None and self.device_map not in DEVICE_MAPS:
            raise ConfigError(f"--device-map: unknown device map '{self.device_map}'; choose one of "
                              f"{', '.join(DEVICE_MAPS)}")
        if self.layers is not None and not self.layers:
            raise ConfigError("--layers needs at least one layer index, e.g. --layers 0,5,11 (or leave it out for all)")
        if self.backend == "tl":
            from importlib.util import find_spec

            if find_spec("transformer_lens") is None:  # an optional dependency: the extra `geomprobe[tl]`
                raise ConfigError("--backend tl needs TransformerLens: pip install 'geomprobe[tl]'")
        if self.out is not None and not str(self.out).strip():
            raise ConfigError("--out is empty: give a run directory, e.g. --out runs/mine (default runs/<model>)")

    def fingerprint(self, revision: str | None, identity: dict | None = None) -> dict:
        """What decides a run directory's results: a rerun with the same values resumes it.
        identity: geomprobe.rundir.model_identity (the resolved commit, or a hash of a local
        model's config and weights), so replaced weights are never resumed as the old model."""
        return {"model": self.model, "revision": revision, "dtype": self.dtype, "quantize": self.quantize,
                "seed": self.seed, "backend": self.backend, "max_tokens": self.max_tokens,
                "model_identity": identity}
