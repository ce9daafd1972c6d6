"""One adapter per architecture family; `adapter_for(model)` picks it from config.model_type."""

from geomprobe.errors import UnsupportedModelError

from .base import Adapter, ModelShape, dequantized_weight
from .bert import BertAdapter
from .gpt_neox import GPTNeoXAdapter
from .llama import LlamaAdapter
from .phi import PhiAdapter

ADAPTERS: dict[str, type[Adapter]] = {
    "gpt_neox": GPTNeoXAdapter,
    "llama": LlamaAdapter,
    "mistral": LlamaAdapter,
    "mixtral": LlamaAdapter,
    "qwen2": LlamaAdapter,
    "phi": PhiAdapter,
    "bert": BertAdapter,
}


def family_of(model_type: str) -> str:
    try:
        return ADAPTERS[model_type].family
    except KeyError:
        raise UnsupportedModelError(
            f"model type '{model_type}' has no geomprobe adapter; supported: {', '.join(sorted(ADAPTERS))}") from None


def adapter_for(model) -> Adapter:
    family_of(model.config.model_type)
    return ADAPTERS[model.config.model_type](model)


__all__ = ["ADAPTERS", "Adapter", "ModelShape", "adapter_for", "dequantized_weight", "family_of"]
