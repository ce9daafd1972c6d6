"""One adapter per architecture family; `adapter_for(model)` picks it from config.model_type.

ADAPTERS is derived from geomprobe.families (each row names its adapter as "module.Class")."""

import importlib

from geomprobe.errors import UnsupportedModelError
from geomprobe.families import FAMILIES

from .base import Adapter, ModelShape, dequantized_weight


def _adapter_class(path: str) -> type[Adapter]:
    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


ADAPTERS: dict[str, type[Adapter]] = {t: _adapter_class(row.adapter) for t, row in FAMILIES.items()}


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
