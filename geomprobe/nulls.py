"""Untrained null models: the same architecture, the same prompts, no learning.

A geometry statistic means something only beside the value an untrained copy of the same
network gives on the same prompts (architecture, prompt length and token identity shape a random
network's activations too). `--null` says which copies a suite measures:

    auto            init:N with N chosen from the model's size (default_null_count): 19 copies up to
                    200M parameters (the rank rule, distribution-free), 10 up to 2B, 5 above; the loss
                    of power is printed beside every result (the minimum detectable effect)
    init:auto       the same
    init:3          three fresh initialisations from the model's own config, each weight drawn
                    once: built on the meta device, then the model's own initialiser (transformers'
                    `_init_weights`) alone. Their torch seeds come from the run's --seed S:
                    1000 + 1000 S + i (copy_seed), so run seed 0 meets copies 1000, 1001, 1002 and
                    run seed 1 meets 2000, 2001, 2002: two runs of one architecture with other seeds
                    meet other copies (their errors are not shared), a sweep over checkpoints at one
                    seed meets the same ones (and reuses them from the copy cache). The seeds start
                    at 1000 so that a random-init model built with a small seed is never one of its
                    own nulls. Each copy's entry in results.json says "build": "own-init"
    init-once:3     the same build, under the name it had before it was the default (init-once-1000, ...)
    init-legacy:3   what `init:N` built before (a copy entry in results.json with no "build" key was
                    built so, whatever its name): `from_config`, torch's default init of every layer, then
                    the library's initialiser over it, so each weight is drawn twice (1.5x the CPU
                    time). Same distributions, other draws (the second draw starts where the first
                    left the generator); named init-legacy-1000, ... here
    step0           the family's published untrained checkpoint (Pythia's revision step0)
    SPEC            any model spec (alias@revision, hub id, local directory) of the same architecture
    off             no null: verdicts then say they had none
    init:2,step0    several, comma-separated

    for null, copy in each_null(loaded, null_specs("auto", loaded)):   # one copy alive at a time
        extract(copy, prompts, ...)
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import gc
import re
from dataclasses import dataclass

from geomprobe.errors import ConfigError
from geomprobe.families import auto_class

INIT_SEED0 = 1000
SEED_STRIDE = 1000  # copies per run seed: init:N takes N <= SEED_STRIDE
DEFAULT_NULL = "auto"
# (largest parameter count, copies): the rank rule needs 19 copies (its smallest p is 1/20); 10 and 5
# copies use the Gaussian t rule, which detects 1.87 and 2.18 null sd half the time (19: 1.84)
NULL_COUNTS = ((200e6, 19), (2e9, 10), (float("inf"), 5))


def default_null_count(n_params: float | None) -> int:
    """The number of fresh initialisations `auto` stands for, from the model's parameter count
    (None: unknown, the cheapest tier's 19)."""
    if n_params is None:
        return NULL_COUNTS[0][1]
    return next(count for limit, count in NULL_COUNTS if n_params <= limit)


def _n_params(loaded) -> int | None:
    if loaded is None:
        return None
    return sum(p.numel() for p in loaded.model.parameters())


@dataclass(frozen=True)
class NullSpec:
    name: str  # directory-safe label: init-0, step0, ...
    kind: str  # "init" | "checkpoint"
    seed: int | None = None  # init: the torch seed of the fresh initialisation
    spec: str | None = None  # checkpoint: the model spec loaded
    build: str = "own-init"  # init: "own-init" (each weight drawn once) | "legacy" (from_config: drawn twice)
    index: int = dataclasses.field(default=0, compare=False)  # 1-based position among the run's copies
    count: int = dataclasses.field(default=0, compare=False)  # how many copies the --null value names

    @property
    def label(self) -> str:
        """How progress lines name the copy: 'copy 3/19 (init-1002)'."""
        return f"copy {self.index}/{self.count} ({self.name})" if self.count else self.name

    def describe(self) -> str:
        if self.kind == "init":
            if self.build == "own-init":
                return (f"fresh initialisation from the model's config (torch seed {self.seed}; each weight drawn "
                        "once, by the model's own initialiser)")
            return f"fresh initialisation from the model's config (torch seed {self.seed})"
        return f"checkpoint {self.spec}"

    def to_dict(self) -> dict:
        # a legacy copy's record has no "build" key: results written before own-init was the default
        # say nothing about the build, and they mean the legacy one
        return {"name": self.name, "kind": self.kind, "seed": self.seed, "spec": self.spec,
                **({"build": self.build} if self.kind == "init" and self.build != "legacy" else {}),
                "description": self.describe()}


def copy_seed(run_seed: int, index: int) -> int:
    """The torch seed of a run's index-th fresh initialisation (0-based): INIT_SEED0 + SEED_STRIDE
    x run_seed + index, so every run seed has its own copies and run seed 0 keeps 1000, 1001, ..."""
    return INIT_SEED0 + SEED_STRIDE * int(run_seed) + int(index)


def null_specs(text: str, loaded=None, n_params: float | None = None, run_seed: int = 0,
               auto_count=default_null_count) -> list[NullSpec]:
    """Parse a --null value (the one parser of its grammar). `step0` needs `loaded` to find the
    family's untrained checkpoint; a family without one is a one-line error. `auto` is
    auto_count(parameters of `loaded`, or n_params, the planner's count): default_null_count, or a
    suite's own count (the ablation's, where a copy costs a whole suite). run_seed: the run's
    --seed, from which the copies' seeds come (copy_seed)."""
    text = (text or "").strip()
    if text in ("", "off", "none"):
        return []
    specs: list[NullSpec] = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        match = re.fullmatch(r"init(-once|-legacy)?(?::(\d+|auto))?|auto", part)
        if match:
            variant = match.group(1) or ""
            count = match.group(2) or ("auto" if part == "auto" else "3")
            if count == "auto":
                n = auto_count(n_params if n_params is not None else _n_params(loaded))
            else:
                n = int(count)
            if n < 1:
                raise ConfigError(f"--null {part}: init:N needs N >= 1 (or --null off)")
            if n > SEED_STRIDE:
                raise ConfigError(f"--null {part}: at most init:{SEED_STRIDE} copies a run (each run seed has "
                                  f"{SEED_STRIDE} copy seeds)")
            prefix, build = {"": ("init", "own-init"), "-once": ("init-once", "own-init"),
                             "-legacy": ("init-legacy", "legacy")}[variant]
            specs += [NullSpec(f"{prefix}-{seed}", "init", seed=seed, build=build)
                      for seed in (copy_seed(run_seed, i) for i in range(n))]
        elif part == "step0":
            if loaded is None:
                specs.append(NullSpec("step0", "checkpoint", spec="step0"))
                continue
            from geomprobe.weights import step0_source

            source = step0_source(loaded)
            if source is None:
                raise ConfigError(f"--null step0: {loaded.spec} ({loaded.family}) has no published untrained "
                                  "checkpoint; use --null init:N or a checkpoint spec")
            specs.append(NullSpec("step0", "checkpoint", spec=source))
        else:
            label = re.sub(r"[^A-Za-z0-9._@-]+", "_", part).strip("_")[-60:] or "checkpoint"
            specs.append(NullSpec(f"ckpt-{label}", "checkpoint", spec=part))
    names = [s.name for s in specs]
    if len(set(names)) != len(names):
        raise ConfigError(f"--null {text}: the same null model is named twice")
    return [dataclasses.replace(spec, index=i + 1, count=len(specs)) for i, spec in enumerate(specs)]


def specs_text(specs: list[NullSpec]) -> str:
    """The --null value that names exactly `specs` (`auto` read out: init:19, init-once:3, step0)."""
    parts: dict[str, int] = {}
    for spec in specs:
        key = spec.name.rpartition("-")[0] if spec.kind == "init" else spec.spec or spec.name
        parts[key] = parts.get(key, 0) + 1
    return ",".join(f"{key}:{count}" if key.startswith("init") else key for key, count in parts.items())


def _own_init(model_class, config, dtype, attn_implementation: str):
    """The model from its config with every weight drawn once, by the model's own initialiser:
    built on the meta device (no memory, no draws), given CPU storage, then transformers'
    `initialize_weights` (the `_init_weights` that `from_config` runs after torch's default init,
    rotary and other computed buffers included) and the weight tying."""
    import torch

    with torch.device("meta"):
        model = model_class.from_config(config, dtype=dtype, attn_implementation=attn_implementation)
    model = model.to_empty(device="cpu")
    for tensor in (*model.parameters(), *model.buffers()):  # meta construction may mark them done
        tensor.__dict__.pop("_is_hf_initialized", None)
    for module in model.modules():
        module.__dict__.pop("_is_hf_initialized", None)
    model.initialize_weights()
    model.tie_weights()
    return model


def fresh_copy(loaded, seed: int, build: str = "own-init"):
    """The model's architecture at full depth, freshly initialised from its config with `seed`,
    in the model's dtype and device, with its tokenizer: a LoadedModel. build: "own-init" (each
    weight drawn once, by the model's initialiser: _own_init; --null init:N, the default) or "legacy"
    (`from_config`, which draws torch's default init first; --null init-legacy:N). Both draw on
    the CPU, then move to the model's device, so a seed gives the same weights on any device."""
    import torch
    import transformers

    from geomprobe.models.loading import LoadedModel

    if build not in ("own-init", "legacy"):
        raise ConfigError(f"an untrained copy's build is 'own-init' or 'legacy', not {build!r}")
    config = copy.deepcopy(loaded.model.config)
    config._attn_implementation = loaded.attn_implementation
    model_class = getattr(transformers, auto_class(loaded.family))
    torch.manual_seed(seed)
    dtype = getattr(torch, loaded.dtype)
    if build == "legacy":
        model = model_class.from_config(config, dtype=dtype, attn_implementation=loaded.attn_implementation)
    else:
        model = _own_init(model_class, config, dtype, loaded.attn_implementation)
    model = model.to(loaded.device if loaded.device_map is None else "cpu").eval()
    label = f"init seed {seed}" + (", drawn once" if build == "own-init" else "")
    out = LoadedModel(model=model, tokenizer=loaded.tokenizer, spec=f"{loaded.spec} [{label}]",
                      source=loaded.source, revision=None, commit=None, family=loaded.family, dtype=loaded.dtype,
                      device=str(loaded.device if loaded.device_map is None else "cpu"), device_map=None,
                      quantize=None, attn_implementation=loaded.attn_implementation)
    from geomprobe.copycache import copy_identity

    out._copy_identity = copy_identity(model, seed, build, loaded.dtype, out.device, loaded.attn_implementation)
    if build != "legacy":  # an extraction of a legacy copy kept in a run directory is not this copy's
        from geomprobe.extraction import _identity

        out._extraction_identity = {**_identity(loaded), "null_build": build, "null_seed": seed}
    return out


def each_null(loaded, specs):
    """(spec, copy) for each null model, built one at a time: before the next copy is built the
    previous one's weights are dropped (its LoadedModel keeps no module, even if the caller still
    holds it), so at most one copy is alive beside the model."""
    for spec in specs:
        with null_model(loaded, spec) as copy:
            yield spec, copy
            copy.model = None
            copy.__dict__.pop("_adapter", None)


@contextlib.contextmanager
def null_model(loaded, null: NullSpec):
    """The null model as a LoadedModel, freed (and the GPU cache emptied) on exit."""
    if null.kind == "init":
        model = fresh_copy(loaded, null.seed, null.build)
    else:
        from geomprobe.models import load_model

        model = load_model(null.spec, dtype=loaded.dtype, device=loaded.device if loaded.device_map is None
                           else "cpu", attn_implementation=loaded.attn_implementation)
        if type(model.model).__name__ != type(loaded.model).__name__ or \
                model.adapter.shape.n_layers != loaded.adapter.shape.n_layers:
            raise ConfigError(f"--null {null.spec}: a {type(model.model).__name__} with "
                              f"{model.adapter.shape.n_layers} layers is not the architecture of {loaded.spec} "
                              f"({type(loaded.model).__name__}, {loaded.adapter.shape.n_layers} layers)")
    import weakref

    module = weakref.ref(model.model)
    try:
        yield model
    finally:
        del model
        if module() is not None:  # a reference cycle keeps the weights: a full collection frees them
            gc.collect()          # (0.3 s a copy in a process with transformers loaded, so only when needed)
        from geomprobe import allocator

        allocator.release()  # the copy's heap-allocated tensors back to the system before the next is built
        try:
            import torch

            if torch.cuda.is_available():
                torch.cuda.empty_cache()
        except ImportError:
            pass
