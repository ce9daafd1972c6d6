"""Models you already hold: a Hugging Face model object, a TransformerLens bridge, an nnsight model.

    loaded = load_model(hf_model, tokenizer=tok)         # a PreTrainedModel built, fine-tuned or merged in memory
    loaded = load_model(bridge)                          # transformer_lens.model_bridge.TransformerBridge
    loaded = load_model(nnsight.LanguageModel(...))      # its tokenizer comes with it
    with load_model(hf_model, tokenizer=tok) as loaded:  # puts the model back as it was on exit
        ex = extract(loaded, prompts)

`borrow` wraps the object in a LoadedModel without copying a weight. What it changes on the
model, it puts back on `release()` (or on leaving the `with` block; `run` and `extract` release
what they borrowed themselves): the attention implementation (geomprobe's function, which the hf
backend reads attention entropies from) and train/eval mode. Placement is the model's own: its
dtype, device, `device_map` and quantisation are recorded, never changed.

A TransformerBridge rewires the model it wraps (each module becomes a bridge component holding
the original), so geomprobe's hooks cannot find the modules there. geomprobe builds the
architecture on the meta device (no memory) and puts the bridge's own parameter and buffer
tensors into it: a second module tree over the same storage, never a copy; the tl backend runs
the bridge itself. A HookedTransformer (TransformerLens 3) holds converted weights, not the
model's, and is refused with what to pass instead.

The run manifest records what identifies an in-memory model: its class, where it came from
(config._name_or_path, when set), a hash of its config and a hash of its weights
(`in_memory_identity`), so a rerun after the weights changed never resumes the old results.
"""

from __future__ import annotations

import copy
import os
import sys
from pathlib import Path

from geomprobe.errors import ConfigError

from .loaded import IN_MEMORY, in_memory_identity  # noqa: F401 (what identifies a model object, in the manifest)


def is_model_object(obj) -> bool:
    """Whether `obj` is a model object geomprobe may borrow: a torch module (a transformers model),
    a TransformerLens or nnsight object, or a LoadedModel; not a name or a path."""
    if obj is None or isinstance(obj, (str, os.PathLike)):
        return False
    if type(obj).__module__.startswith(("nnsight", "transformer_lens", "geomprobe.models")):
        return True
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(obj, torch.nn.Module)


def borrow(obj, tokenizer=None, *, name: str | None = None, attn_implementation: str | None = None):
    """A LoadedModel over a model object the caller holds: a transformers PreTrainedModel (with its
    tokenizer, or one found in its local config._name_or_path directory), a TransformerLens
    TransformerBridge or an nnsight LanguageModel. A LoadedModel is returned as it is.

    name: how runs and reports call it (default "in-memory <Class>", or the directory it came
    from). attn_implementation: default geomprobe's (the hf backend's)."""
    from geomprobe.attention import ATTN_IMPLEMENTATION

    from .loaded import LoadedModel

    if isinstance(obj, LoadedModel):
        return obj
    attn = attn_implementation or ATTN_IMPLEMENTATION
    kind, model, found_tokenizer, bridge = _unwrap(obj)
    tokenizer = tokenizer if tokenizer is not None else found_tokenizer
    if tokenizer is None:
        tokenizer = _tokenizer_beside(model)
    if tokenizer is None:
        raise ConfigError(f"a {type(model).__name__} object came without its tokenizer: pass it, "
                          "load_model(model, tokenizer=tok)")
    from geomprobe.adapters import family_of

    family = family_of(model.config.model_type)
    if any(p.is_meta for p in model.parameters()):
        raise ConfigError(f"the {type(model).__name__} holds no weights yet (meta tensors): load them first "
                          "(nnsight: LanguageModel(..., dispatch=True))")
    restore = _switch(model, attn) if bridge is None else (lambda: None)
    origin = str(getattr(model.config, "_name_or_path", "") or "")
    source = origin if origin and Path(origin).expanduser().is_dir() else IN_MEMORY
    dtype, device, device_map = _placement(model)
    label = name or (f"{IN_MEMORY} {type(obj).__name__}" + (f" ({Path(origin).name})" if origin else ""))
    loaded = LoadedModel(model=model, tokenizer=tokenizer, spec=label, source=source, revision=None, commit=None,
                         family=family, dtype=dtype, device=device, device_map=device_map,
                         quantize=_quantization(model), attn_implementation=attn)
    loaded.in_memory = {"kind": kind, "class": f"{type(obj).__module__}.{type(obj).__name__}", "origin": origin or None}
    loaded.bridge = bridge
    loaded._restore = restore
    return loaded


def _unwrap(obj):
    """(kind, the Hugging Face model to hook, the tokenizer it carries or None, the bridge or None)."""
    import torch

    cls, module = type(obj).__name__, type(obj).__module__
    if module.startswith("transformer_lens") and cls == "TransformerBridge":
        return "transformer_lens.TransformerBridge", _unbridged(obj), getattr(obj, "tokenizer", None), obj
    if module.startswith("transformer_lens") and cls == "HookedTransformer":
        raise ConfigError("a HookedTransformer holds TransformerLens's converted weights, not the model's: pass the "
                          "Hugging Face model itself, or a TransformerBridge (TransformerLens 4)")
    if module.startswith("nnsight"):
        inner = getattr(obj, "_module", None)
        if not isinstance(inner, torch.nn.Module):
            raise ConfigError(f"this nnsight {cls} wraps no torch model geomprobe can read")
        return "nnsight." + cls, inner, getattr(obj, "tokenizer", None), None
    from transformers import PreTrainedModel

    if isinstance(obj, PreTrainedModel):
        return "transformers." + cls, obj, None, None
    if isinstance(obj, torch.nn.Module):
        raise ConfigError(f"geomprobe reads Hugging Face transformers models; a {cls} is not one (a TransformerLens "
                          "bridge and an nnsight LanguageModel are accepted too)")
    raise ConfigError(f"model: give an alias, a hub id, a local directory or a model object, not a {cls}")


def _tokenizer_beside(model):
    """The tokenizer saved in the local directory the model came from, if there is one."""
    origin = getattr(model.config, "_name_or_path", "") or ""
    directory = Path(origin).expanduser()
    if not origin or not directory.is_dir() or not any(
            (directory / f).exists() for f in ("tokenizer.json", "tokenizer_config.json", "vocab.txt")):
        return None
    import transformers

    return transformers.AutoTokenizer.from_pretrained(directory)


def _switch(model, attn: str):
    """Set the attention implementation and eval mode; returns the function that puts both back."""
    previous, training = model.config._attn_implementation, model.training
    if previous != attn:
        try:
            model.set_attn_implementation(attn)
        except (ValueError, ImportError, AttributeError) as error:
            first = (str(error).strip().splitlines() or [type(error).__name__])[0][:160]
            raise ConfigError(f"cannot switch this {type(model).__name__} to the '{attn}' attention implementation "
                              f"geomprobe reads attention from ({first})") from None
    model.eval()

    def restore() -> None:
        if model.config._attn_implementation != previous and previous is not None:
            model.set_attn_implementation(previous)
        model.train(training)

    return restore


def _unbridged(bridge):
    """The bridge's model as transformers builds it, over the bridge's own tensors (no copy)."""
    import torch

    from geomprobe.attention import ATTN_IMPLEMENTATION

    original = bridge.original_model
    tensors: dict = {}
    for named in (original.named_parameters(remove_duplicate=False), original.named_buffers(remove_duplicate=False)):
        for key, tensor in named:
            tensors.setdefault(key.replace("._original_component", "").replace("_original_component.", ""), tensor)
    config = copy.deepcopy(original.config)
    with torch.device("meta"):
        skeleton = type(original)(config)
    missing = []
    for named, store in ((skeleton.named_parameters(remove_duplicate=False), "_parameters"),
                         (skeleton.named_buffers(remove_duplicate=False), "_buffers")):
        for key, _ in list(named):
            owner, _, leaf = key.rpartition(".")
            if key not in tensors:
                missing.append(key)
                continue
            getattr(skeleton.get_submodule(owner), store)[leaf] = tensors[key]
    if missing:
        raise ConfigError(f"this TransformerBridge does not expose {len(missing)} of the model's tensors "
                          f"({', '.join(missing[:3])}): pass its original Hugging Face model instead")
    skeleton.set_attn_implementation(ATTN_IMPLEMENTATION)
    return skeleton.eval()


def _placement(model) -> tuple[str, str, dict | None]:
    """The model's dtype (of its floating-point weights), device and accelerate device map."""
    import torch

    floating = [p for p in model.parameters() if p.is_floating_point()]
    dtype = str((floating or list(model.parameters()))[0].dtype).removeprefix("torch.")
    dtype = dtype if dtype in ("float32", "bfloat16", "float16") else "float32"
    device = str(model.get_input_embeddings().weight.device)
    device_map = getattr(model, "hf_device_map", None)
    if isinstance(device_map, dict) and len({str(v) for v in device_map.values()}) > 1:
        return dtype, device, {str(k): str(v) for k, v in device_map.items()}
    return dtype, device if not torch.device(device).type == "meta" else "cpu", None


def _quantization(model) -> str | None:
    if getattr(model, "is_loaded_in_4bit", False):
        return "4bit"
    if getattr(model, "is_loaded_in_8bit", False):
        return "8bit"
    return None
