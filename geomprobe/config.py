"""RunConfig: what loads the model and drives extraction, shared by every suite of a run.

Each suite's own options live in its own config class (geomprobe.suites.<name>); the CLI builds
its options from both (geomprobe.cli), so every default below is written once.

    from geomprobe import RunConfig, run
    from geomprobe.suites.sula import SulaConfig
    run(RunConfig(model="pythia-410m", dtype="bfloat16"), [SulaConfig(n_per_k=100)])

Every config round-trips through plain values (to_dict / from_dict, so JSON and YAML), and
write_config_file / read_config_file are the files `geomprobe run --config FILE` reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from geomprobe.errors import ConfigError
from geomprobe.models.registry import DEFAULT_MODEL
from geomprobe.options import as_dict, from_dict, option, validate

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
    prompts: str | None = option(None, "prompt file (.jsonl records or plain text lines; from Python also a list "
                                       "of strings or records); default: each suite chooses its own (built-in "
                                       "demo prompts, corpora or a wind tunnel's task)")
    out: str | None = option(None, "run directory (default runs/<model>); a rerun resumes it")
    revision: str | None = option(None, "hub revision, e.g. step0 (same as model@revision)")
    dtype: Literal["float32", "bfloat16", "float16"] = option("float32", "weights and activations dtype")
    device: str = option("auto", "auto (cuda if available, else cpu) | cpu | cuda | cuda:1 | mps")
    device_map: str | None = option(None, "accelerate device map: auto | balanced | balanced_low_0 | sequential "
                                          "(shards one model across GPUs)")
    quantize: Literal["4bit", "8bit"] | None = option(None, "bitsandbytes quantisation")
    backend: Literal["hf", "tl"] = option("hf", "hf (geomprobe hooks) | tl (TransformerLens 4 bridge)")
    batch_size: int | None = option(None, "prompts per forward pass, or auto: the largest that fits, probed once on "
                                          "a GPU and remembered (default: 8 on a CPU; on a GPU the largest power of "
                                          "two up to 64 that fits, from `geomprobe plan`)", min=1)
    seed: int = option(0, "seed for every random choice", min=0, max=2**32 - 1)
    layers: tuple[int, ...] | None = option(None, "comma-separated layer indices to extract (default: all; the "
                                                  "ablation's edited layers are --edit-layers)")
    readouts: tuple[Readout, ...] = option(("values",), "comma-separated readouts to extract: values, z, resid "
                                                        "(block output, pre-norm), hidden (hidden_states, "
                                                        "last layer after the final norm; a suite adds the "
                                                        "ones it needs)")
    tokens: tuple[str, ...] = option((), "comma-separated single tokens whose next-token probabilities to record, "
                                         "e.g. ' dax, lug'", strip=False)
    max_tokens: int | None = option(None, "keep only the last N tokens of longer prompts", min=1)
    limit: int | None = option(None, "a quick trial: each suite reads at most the first N prompts of its prompt "
                                     "set (--prompts, a corpus, the demo prompts or a wind tunnel's sample), and "
                                     "SULA-based suites at most N per k (at least 2)", min=1)
    wandb: str | None = option(None, "after the suites, log the run to Weights & Biases project PROJECT (or "
                                     "ENTITY/PROJECT): headline figures, per-layer tables, run.json and the report "
                                     "as an artifact; needs wandb; WANDB_MODE=offline keeps it local")
    overwrite: bool = option(False, "replace a run directory made with another configuration")
    skip_plan_check: bool = option(False, "run even when `geomprobe plan` says the model and a batch do not fit "
                                          "the device's memory")

    def __post_init__(self):
        from geomprobe.models.borrowed import is_model_object

        held = self.model if is_model_object(self.model) else None
        if held is not None:  # a model object (or a LoadedModel): the run borrows it; the rest is checked as usual
            object.__setattr__(self, "model", "in-memory")
        auto = isinstance(self.batch_size, str) and self.batch_size.strip().lower() == "auto"
        if auto:  # --batch-size auto: resolved once the model is loaded (geomprobe.batching)
            self.batch_size = None
        given = None
        if self.prompts is not None and not isinstance(self.prompts, (str, Path)):
            from geomprobe.prompts import prompts_from  # prompts given in Python: kept as JSON-ready records

            given, self.prompts = prompts_from(self.prompts), None
        validate(self)
        if held is not None:
            object.__setattr__(self, "model", held)
        if given is not None:
            self.prompts = given
        if auto:
            self.batch_size = "auto"

    def check(self) -> None:
        """Refuse, in one line (ConfigError), what no model could run: an unknown device or device map,
        empty layers, the tl backend without TransformerLens, an empty output directory, ..."""
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
        if self.wandb is not None:
            check_project(self.wandb)
        if self.out is not None and not str(self.out).strip():
            raise ConfigError("--out is empty: give a run directory, e.g. --out runs/mine (default runs/<model>)")

    def to_dict(self) -> dict:
        """The options as plain JSON/YAML-ready values (tuples as lists): what `geomprobe run --config
        FILE` reads, and from_dict reads back. A config holding a model object cannot be written."""
        from geomprobe.models.borrowed import is_model_object

        if is_model_object(self.model):
            raise ConfigError(f"RunConfig.to_dict: a model object cannot be written to a file "
                              f"({type(self.model).__name__}); give its alias, hub id or saved directory instead")
        return as_dict(self)

    @classmethod
    def from_dict(cls, data) -> RunConfig:
        """The config from a dict such as to_dict() writes (or json/yaml loads): every value checked
        as the constructor checks it; an unknown key is refused in one line naming it."""
        return from_dict(cls, data)

    def fingerprint(self, revision: str | None, identity: dict | None = None) -> dict:
        """What decides a run directory's results: a rerun with the same values resumes it.
        identity: geomprobe.rundir.model_identity (the resolved commit, or a hash of a local
        model's config and weights), so replaced weights are never resumed as the old model."""
        out = {"model": self.model, "revision": revision, "dtype": self.dtype, "quantize": self.quantize,
               "seed": self.seed, "backend": self.backend, "max_tokens": self.max_tokens, "model_identity": identity}
        if self.limit is not None:  # only when given: run directories made before --limit keep their fingerprint
            out["limit"] = self.limit
        return out


def check_project(project: str) -> None:
    """--wandb: refuse, before the run starts, a project name W&B would refuse, or a missing wandb
    (geomprobe.tracking logs the run), in one line each."""
    import re
    from importlib.util import find_spec

    if not re.fullmatch(r"([A-Za-z0-9_.-]+/)?[A-Za-z0-9_.-]+", project or ""):
        raise ConfigError(f"--wandb {project!r}: give a project name, or entity/project (letters, digits, '-', '_', "
                          "'.')")
    if find_spec("wandb") is None:
        raise ConfigError("--wandb needs Weights & Biases: pip install 'geomprobe[wandb]' (or pip install wandb)")


# ----------------------------------------------------------------------------------------------
# config files: what `geomprobe run --config FILE` reads

YAML_SUFFIXES = (".yaml", ".yml")


def _yaml():
    try:
        import yaml
    except ImportError:
        raise ConfigError("YAML config files need PyYAML: pip install pyyaml (or write the file as JSON)") from None
    return yaml


def read_config_file(path) -> dict:
    """The mapping a JSON or YAML (.yaml, .yml; needs PyYAML) config file holds, as written: option
    names (field names, or flags without dashes) to values, and "suite". Read by
    geomprobe.readers.read_config: a regular file of at most 1 MiB, strict UTF-8, at most 32 deep,
    no NaN or Infinity, no lone surrogates, no YAML aliases. One-line ConfigError when the file is
    missing, not such a file, not valid JSON or YAML, or not a mapping."""
    from geomprobe.readers import read_config

    return read_config(path)


def config_file_dict(run_config: RunConfig, suites=()) -> dict:
    """One flat mapping of a run, as `geomprobe run --config FILE` reads it: "suite", the RunConfig's
    options and the suite configs' (an option the suites share must have one value, as on the
    command line)."""
    configs = [suites] if hasattr(suites, "suite") else list(suites or ())
    named = [c for c in configs if not hasattr(c, "suite")]
    if named:
        raise ConfigError(f"write_config_file takes suite configs (SulaConfig(...), ...), not {named[0]!r}; "
                          "or write the suite's name yourself: {'suite': 'sula', ...}")
    data = {"suite": ",".join(c.suite for c in configs)} if configs else {}
    data.update(run_config.to_dict())
    owner = {}
    for options in configs:
        for name, value in options.to_dict().items():
            if name in data and data[name] != value:
                first = owner.get(name, "the run")
                raise ConfigError(f"{name} is {data[name]!r} for {first} and {value!r} for {options.suite}: a config "
                                  "file holds one value per option, as the command line does")
            data[name] = value
            owner.setdefault(name, options.suite)
    return data


def write_config_file(path, run_config: RunConfig, suites=()) -> Path:
    """Write config_file_dict(run_config, suites) as JSON, or YAML for a .yaml/.yml path (needs
    PyYAML); `geomprobe run --config PATH` runs it. Returns the path."""
    import json

    path = Path(path)
    data = config_file_dict(run_config, suites)
    if path.suffix.lower() in YAML_SUFFIXES:
        text = _yaml().safe_dump(data, sort_keys=False, allow_unicode=True)
    else:
        text = json.dumps(data, indent=2) + "\n"
    path.write_text(text, encoding="utf-8")
    return path
