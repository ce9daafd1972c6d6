"""A model spec resolved for planning (ModelTarget): an alias, a built-in, a wind tunnel, a local
directory or a cached hub id -> its Architecture and where its tokenizer is, without loading or
downloading anything."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from geomprobe import families
from geomprobe.errors import ConfigError

from .architecture import CONFIG_CLASS_TYPES, Architecture, architecture_from_fields


@dataclass(frozen=True)
class ModelTarget:
    """A model spec resolved for planning, without loading anything."""

    spec: str
    name: str
    kind: str  # hub | builtin | windtunnel | local
    hub_id: str | None
    arch: Architecture
    windtunnel: dict | None = None  # {"task", "task_options", "cached", "dir"} of a wind-tunnel model
    pythia: bool = False  # the family publishes step0 (Pythia)
    tokenizer_dir: str | None = None  # where a tokenizer is at hand without downloading

    @property
    def family(self) -> str:
        from geomprobe.models.registry import FAMILY_OF_TYPE

        return FAMILY_OF_TYPE.get(self.arch.model_type, self.arch.model_type)


def _read_config(path: Path) -> dict:
    """A model's config.json (geomprobe.readers.read_model_config), a one-line ConfigError otherwise."""
    from geomprobe.readers import read_model_config

    return read_model_config(path, ConfigError)


def _fields_of_config_json(config: dict, where: str) -> dict:
    if "model_type" not in config:
        raise ConfigError(f"{where} has no model_type")
    if config["model_type"] not in CONFIG_CLASS_TYPES.values():
        raise ConfigError(f"{where}: model type '{config['model_type']}' is not one geomprobe plans for "
                          f"({', '.join(CONFIG_CLASS_TYPES.values())})")
    return config


def _meta_count(config_dir: Path) -> int | None:
    """The parameter count of the model built on the meta device from a local config.json (exact,
    for architectures the formulas may not cover); None when transformers cannot build it."""
    try:
        import transformers

        from geomprobe.models.published import build_on_meta, count_parameters

        config = transformers.AutoConfig.from_pretrained(str(config_dir), local_files_only=True)
        return count_parameters(build_on_meta(config))
    except Exception:  # noqa: BLE001 - a cross-check only: the formulas stand without it
        return None


def _windtunnel_fields(task: str) -> tuple[dict, dict]:
    """(config fields, wind-tunnel info) of a built-in wind tunnel: its cached config.json, or the
    recipe's GPT-NeoX (geomprobe.windtunnel.models.gpt_neox) when it is not trained yet."""
    from geomprobe.windtunnel.builtin import RECIPES, recipe, windtunnel_dir, windtunnel_info

    directory = windtunnel_dir(task)
    config = recipe(task)
    cached = (directory / "config.json").exists() and (directory / "windtunnel.json").exists()
    if cached:
        info = windtunnel_info(directory)
        fields = _read_config(directory / "config.json")
    else:
        from geomprobe.windtunnel.tasks import make_task

        info = {"task": task, "task_options": config.task_options}
        made = make_task(task, **config.task_options)
        spec = config.spec
        fields = {"model_type": families.WINDTUNNEL_TYPE, "hidden_size": spec.d_model, "num_hidden_layers": spec.n_layers,
                  "num_attention_heads": spec.n_heads, "intermediate_size": spec.d_mlp, "vocab_size": made.vocab_size,
                  "max_position_embeddings": max(2048, made.max_tokens()), "tie_word_embeddings": False,
                  "attention_bias": True}
    steps_per_s = RECIPES[task][1]
    return fields, {"task": info["task"], "task_options": info.get("task_options", {}), "cached": cached,
                    "dir": str(directory), "train_s": None if cached else (config.steps or 0) / steps_per_s}


def resolve_target(spec: str) -> ModelTarget:
    """An alias, alias@revision, a local model directory, or a hub id whose config.json is in the
    local Hugging Face cache -> its shape, without loading or downloading anything."""
    from geomprobe.models.gguf import PACKAGED, cached_packaged, ensure_gguf, is_gguf_path
    from geomprobe.models.published import PUBLISHED
    from geomprobe.models.registry import MODELS, closest_aliases, parse_model_spec

    name, _ = parse_model_spec(str(spec))
    info = MODELS.get(name)
    if info is not None:
        if info.kind == "builtin":
            from geomprobe.models.builtin import _COMMON, TINY_MODELS, _fingerprint
            from geomprobe.paths import cache_dir

            tiny = TINY_MODELS[name]
            fields = {"model_type": CONFIG_CLASS_TYPES[tiny.config_class], **_COMMON, **tiny.overrides}
            directory = cache_dir() / "models" / f"{name}-{_fingerprint(name)}"
            return ModelTarget(spec, name, "builtin", None,
                               architecture_from_fields(fields, source=f"built-in {tiny.config_class} fields"),
                               tokenizer_dir=str(directory) if (directory / "config.json").exists() else None)
        if info.kind == "windtunnel":
            task = info.hub_id.split(":", 1)[1]
            fields, wt = _windtunnel_fields(task)
            source = f"{wt['dir']}/config.json" if wt["cached"] else f"the {task} wind tunnel's training recipe"
            return ModelTarget(spec, name, "windtunnel", None, architecture_from_fields(fields, source=source),
                               windtunnel=wt, tokenizer_dir=wt["dir"] if wt["cached"] else None)
        entry = PUBLISHED[name]
        arch = architecture_from_fields(entry.config, entry.n_params,
                                        source=f"published config.json of {entry.hub_id}, published parameter count")
        tokenizer_dir = _hf_cached_dir(entry.hub_id)
        if tokenizer_dir is None and name in PACKAGED:  # a packaged GGUF already dequantized into the cache
            converted = cached_packaged(name)
            tokenizer_dir = None if converted is None else str(converted)
        return ModelTarget(spec, name, "hub", entry.hub_id, arch, pythia=name.startswith("pythia-"),
                           tokenizer_dir=tokenizer_dir)
    path = Path(name).expanduser()
    if is_gguf_path(name):  # planned on its dequantized folder (converted once, on first use)
        path = ensure_gguf(path)
    if path.is_dir():
        if not (path / "config.json").exists():
            raise ConfigError(f"'{name}' is a directory but has no config.json: point --model at a Hugging Face "
                              "model directory (save_pretrained output)")
        fields = _fields_of_config_json(_read_config(path / "config.json"), f"{path}/config.json")
        counted = _meta_count(path)  # exact, whatever the formulas cover
        source = f"{path.resolve()}/config.json" + (", parameters counted on the meta device" if counted else "")
        arch = architecture_from_fields(fields, n_params=counted, source=source)
        from geomprobe.windtunnel.builtin import windtunnel_info

        wt_info = windtunnel_info(path)
        wt = None if wt_info is None else {"task": wt_info["task"], "task_options": wt_info.get("task_options", {}),
                                           "cached": True, "dir": str(path.resolve()), "train_s": None}
        return ModelTarget(spec, name, "local", None, arch, windtunnel=wt, tokenizer_dir=str(path.resolve()))
    if name.count("/") == 1 and not name.startswith((".", "/", "~")):
        directory = _hf_cached_dir(name)
        if directory is None:
            raise ConfigError(f"{name}: no shape known offline (its config.json is not in the local Hugging Face "
                              "cache): plan with an alias from `geomprobe models` or a local model directory")
        fields = _fields_of_config_json(_read_config(Path(directory) / "config.json"), f"{name} config.json")
        return ModelTarget(spec, name, "hub", name,
                           architecture_from_fields(fields, source=f"{name} config.json (Hugging Face cache)"),
                           pythia="/pythia" in name.lower(),
                           tokenizer_dir=directory)
    hint = closest_aliases(name)
    raise ConfigError(f"unknown model '{name}'" + (f" (did you mean {', '.join(hint)}?)" if hint else "")
                      + ": use an alias from `geomprobe models`, a local model directory, or a hub id whose "
                        "config.json is in the local cache")


def _hf_cached_dir(hub_id: str) -> str | None:
    """The snapshot folder holding hub_id's config.json in the local Hugging Face cache, or None
    (a cache lookup only: never a download)."""
    try:
        from huggingface_hub import try_to_load_from_cache

        found = try_to_load_from_cache(hub_id, "config.json")
    except Exception:  # noqa: BLE001 - an absent or unreadable cache is simply no cache
        return None
    return str(Path(found).parent) if isinstance(found, str) else None


def cached_tokenizer(target: ModelTarget, quiet: bool = True):
    """The model's tokenizer when it is at hand without building, training or downloading anything
    (a local directory, a built or trained built-in, the Hugging Face cache), else None. Wind tunnels
    need none: their word-level count is exact. quiet: set transformers' logging to errors only
    (the command line's choice; the runner's preflight leaves the caller's logging alone)."""
    if target.tokenizer_dir is None or target.windtunnel is not None:
        return None
    try:
        from transformers import AutoTokenizer
        from transformers.utils import logging

        if quiet:
            logging.set_verbosity_error()
        return AutoTokenizer.from_pretrained(target.tokenizer_dir, local_files_only=True)
    except Exception:  # noqa: BLE001 - without one the lengths are estimated
        return None
