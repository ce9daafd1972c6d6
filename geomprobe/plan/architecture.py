"""The architecture: shapes and parameter groups from config.json fields (no torch, no transformers).
Separate from resolving a model spec (geomprobe.plan.target) so that the formulas, which reproduce
every published parameter count (tests/cli/test_plan.py), read on their own."""

from __future__ import annotations

from dataclasses import dataclass

from geomprobe import families
from geomprobe.errors import ConfigError
from geomprobe.layouts import LAYOUTS, canonical_fields

# from the family table (geomprobe.families): config class -> model type, the llama layout's types,
# tokenizers that prepend a BOS token
CONFIG_CLASS_TYPES, LLAMA_LIKE, BOS_TYPES = families.CONFIG_CLASS_TYPES, families.LLAMA_LIKE, families.BOS_TYPES


@dataclass(frozen=True)
class Architecture:
    """What planning needs of a model: its shape and its parameters in groups."""

    model_type: str
    n_layers: int
    n_heads: int
    n_kv_heads: int
    d_head: int
    d_model: int
    d_ff: int
    vocab: int
    context: int | None
    n_experts: int | None
    experts_per_token: int | None
    gated: bool  # SwiGLU MLP (gate and up projections)
    causal: bool  # a language model (False: a BERT-style encoder, no unembedding)
    embedding: int  # input embeddings (token, and position / type for BERT)
    lm_head: int  # the unembedding when it is not tied to the input embedding (with its bias)
    linear: int  # nn.Linear weights of the blocks (quantisable)
    linear_rows: int  # their output rows (8-bit scales)
    experts: int  # fused 3-D expert weights (Mixtral under transformers >= 5)
    small: int  # norms, biases, routers
    n_params: int  # the total: published where known, else the sum of the groups
    source: str  # where the shape comes from

    @property
    def counted(self) -> int:
        return self.embedding + self.lm_head + self.linear + self.experts + self.small

    @property
    def n_params_active(self) -> int:
        """Parameters a token passes through: for a mixture of experts, top-k of the experts."""
        if not self.n_experts:
            return self.n_params
        return self.n_params - round(self.experts * (self.n_experts - self.experts_per_token) / self.n_experts)

    @property
    def matmul_params(self) -> int:
        """Active weights multiplied at every position (embeddings and the unembedding excluded)."""
        experts = self.experts if not self.n_experts else self.experts * self.experts_per_token / self.n_experts
        return int(self.linear + experts)

    def shape(self) -> dict:
        return {"n_layers": self.n_layers, "n_heads": self.n_heads, "n_kv_heads": self.n_kv_heads,
                "d_head": self.d_head, "d_model": self.d_model, "d_ff": self.d_ff, "vocab": self.vocab,
                "context": self.context, "n_experts": self.n_experts, "experts_per_token": self.experts_per_token}


def parameter_groups(fields: dict) -> dict:
    """config.json fields -> the parameter groups of the transformers model built from them (the
    defaults of the transformers config classes where a field is absent), by the model type's
    layout (geomprobe.layouts)."""
    t = fields["model_type"]
    row = families.FAMILIES.get(t)
    if row is None or row.layout not in LAYOUTS:
        raise ConfigError(f"planning knows no parameter layout for model type '{t}'")
    layout = LAYOUTS[row.layout]
    c = layout.canonical(fields)
    D, V = c["hidden_size"], c["vocab_size"]
    F = c.get("intermediate_size") or 4 * D
    H = c["num_attention_heads"]
    tied = bool(c.get("tie_word_embeddings", False))
    g = {"embedding": V * D, "lm_head": 0 if tied else V * D, "linear": 0, "linear_rows": 0, "experts": 0, "small": 0,
         "gated": False, "causal": True, "d_ff": F, "n_kv_heads": c.get("num_key_value_heads") or H,
         "d_head": c.get("head_dim") or D // H, "n_experts": None, "experts_per_token": None}
    layout.groups(c, row, g)
    return g


def architecture_from_fields(fields: dict, n_params: int | None = None, source: str = "") -> Architecture:
    """The Architecture of a model from its config.json fields (n_params: the published total, when
    known, else the sum of the parameter groups)."""
    fields = canonical_fields(fields)
    g = parameter_groups(fields)
    counted = g["embedding"] + g["lm_head"] + g["linear"] + g["experts"] + g["small"]
    return Architecture(
        model_type=fields["model_type"], n_layers=fields["num_hidden_layers"], n_heads=fields["num_attention_heads"],
        n_kv_heads=g["n_kv_heads"], d_head=g["d_head"], d_model=fields["hidden_size"], d_ff=g["d_ff"],
        vocab=fields["vocab_size"], context=fields.get("max_position_embeddings"), n_experts=g["n_experts"],
        experts_per_token=g["experts_per_token"], gated=g["gated"], causal=g["causal"], embedding=g["embedding"],
        lm_head=g["lm_head"], linear=g["linear"], linear_rows=g["linear_rows"], experts=g["experts"],
        small=g["small"], n_params=n_params if n_params is not None else counted, source=source)
