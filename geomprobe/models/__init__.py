"""Model registry and loading: `load_model("pythia-410m@step0", dtype="bfloat16")`."""

from .builtin import cache_dir, ensure_builtin
from .loading import DTYPES, QUANTIZE, LoadedModel, load_model, resolve, resolve_device
from .registry import DEFAULT_MODEL, MODELS, ModelInfo, parse_model_spec

__all__ = ["DEFAULT_MODEL", "DTYPES", "MODELS", "QUANTIZE", "LoadedModel", "ModelInfo", "cache_dir",
           "ensure_builtin", "load_model", "parse_model_spec", "resolve", "resolve_device"]
