"""Parameter layouts, one per adapter family (Family.layout): the parameter groups of a model built
from its config.json fields, and the names its config gives the common fields. Torch-free, so the
planner reads a model's shape without loading anything; the formulas reproduce every alias's
published parameter count (tests/cli/test_plan.py) and each tiny model's built count.

A layout's `groups(c, row, g)` fills `g` (embedding, lm_head, linear, linear_rows, experts, small,
and where they differ from the defaults gated, causal) from the canonical fields `c` (hidden_size,
num_hidden_layers, num_attention_heads, vocab_size, intermediate_size, ...; see Layout.canonical)
and the model type's row of geomprobe.families.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from geomprobe.families import FAMILIES, Family


@dataclass(frozen=True)
class Layout:
    """One parameter layout: its groups formula, and config field names that differ from the
    canonical ones (canonical name -> this layout's name)."""

    name: str
    groups: Callable[[dict, Family, dict], None]
    field_names: dict[str, str] = field(default_factory=dict)

    def canonical(self, fields: dict) -> dict:
        """config.json fields with the canonical names filled in from this layout's own."""
        return {**fields, **{common: fields[own] for common, own in self.field_names.items()
                             if own in fields and common not in fields}}


def _shape(c: dict) -> tuple[int, int, int, int, int, int, int]:
    D, L, H, V = c["hidden_size"], c["num_hidden_layers"], c["num_attention_heads"], c["vocab_size"]
    F = c.get("intermediate_size") or 4 * D
    KV = c.get("num_key_value_heads") or H
    dh = c.get("head_dim") or D // H
    return D, L, H, V, F, KV, dh


def _gpt_neox(c: dict, row: Family, g: dict) -> None:
    """One fused query_key_value Linear (with biases unless attention_bias is false), a dense output,
    a 4x MLP; two LayerNorms per block and a final one."""
    D, L, H, V, F, KV, dh = _shape(c)
    bias = bool(c.get("attention_bias", True))
    g["linear"] = L * (4 * D * D + 2 * D * F)
    g["linear_rows"] = L * (5 * D + F)
    g["small"] = L * (4 * D + (4 * D if bias else 0) + F + D) + 2 * D


def _llama(c: dict, row: Family, g: dict) -> None:
    """Separate q/k/v/o (grouped-query), a gated MLP (or a mixture of gated experts); RMSNorms
    (row.block_norms per block); biases as the row says (Qwen2's q/k/v always, attention_bias,
    Llama's mlp_bias, the per-head q/k norms)."""
    D, L, H, V, F, KV, dh = _shape(c)
    g["gated"] = True
    attn, attn_rows = D * dh * (2 * H + 2 * KV), dh * (H + 2 * KV) + D
    if row.qkv_bias:
        bias = dh * (H + 2 * KV)
    elif c.get("attention_bias", False):  # q, k, v and o biases (Llama, Qwen3)
        bias = dh * (H + 2 * KV) + D
    else:
        bias = 0
    bias += 2 * dh if row.key_norm else 0  # the query and key RMSNorm weights (per head, shared)
    mlp_bias = 2 * F + D if row.mlp_bias_option and c.get("mlp_bias", False) else 0
    g["linear"], g["linear_rows"] = L * attn, L * attn_rows
    if row.experts:
        E = c.get("num_local_experts", 8)
        g.update(n_experts=E, experts_per_token=c.get("num_experts_per_tok", 2))
        g["experts"] = L * E * 3 * D * F
        g["small"] = L * (2 * D + bias + D * E) + D
    else:
        g["linear"] += L * 3 * D * F
        g["linear_rows"] += L * (2 * F + D)
        g["small"] = L * (row.block_norms * D + bias + mlp_bias) + D


def _phi(c: dict, row: Family, g: dict) -> None:
    """Separate q/k/v and a dense output, with biases; a 2-layer MLP in parallel; one LayerNorm per
    block; optional q/k LayerNorms; an unembedding with a bias."""
    D, L, H, V, F, KV, dh = _shape(c)
    attn = D * dh * (2 * H + 2 * KV)
    g["linear"] = L * (attn + 2 * D * F)
    g["linear_rows"] = L * (dh * (H + 2 * KV) + D + F + D)
    qk_norm = 4 * dh if c.get("qk_layernorm", False) else 0
    g["small"] = L * (dh * (H + 2 * KV) + D + F + D + 2 * D + qk_norm) + 2 * D
    g["lm_head"] += V  # the unembedding's bias


def _bert(c: dict, row: Family, g: dict) -> None:
    """An encoder: token, position and type embeddings, no unembedding; a pooler."""
    D, L, H, V, F, KV, dh = _shape(c)
    g["causal"], g["lm_head"] = False, 0
    g["embedding"] = (V + c.get("max_position_embeddings", 512) + c.get("type_vocab_size", 2)) * D
    g["linear"] = L * (4 * D * D + 2 * D * F) + D * D  # the pooler is a linear layer too
    g["linear_rows"] = L * (5 * D + F) + D
    g["small"] = 2 * D + L * (4 * D + F + D + 4 * D) + D


def _gpt2(c: dict, row: Family, g: dict) -> None:
    """Learned positions (n_positions x D) beside the token embedding; Conv1D projections with biases:
    a fused c_attn (3D outputs), c_proj, a 2-layer MLP (n_inner, or 4D when null); two LayerNorms
    per block and ln_f. The unembedding is tied unless the config says otherwise (GPT2Config's
    default is tied, and gpt2's config.json does not name the field)."""
    D, L, H, V, F, KV, dh = _shape(c)
    g["embedding"] = (V + c.get("max_position_embeddings", 1024)) * D
    g["lm_head"] = 0 if c.get("tie_word_embeddings", True) else V * D
    g["linear"] = L * (4 * D * D + 2 * D * F)
    g["linear_rows"] = L * (5 * D + F)
    g["small"] = L * (2 * D + 3 * D + D + 2 * D + F + D) + 2 * D  # ln_1, c_attn, c_proj, ln_2, c_fc, mlp.c_proj; ln_f


LAYOUTS: dict[str, Layout] = {layout.name: layout for layout in (
    Layout("gpt_neox", _gpt_neox), Layout("llama", _llama), Layout("phi", _phi), Layout("bert", _bert),
    Layout("gpt2", _gpt2, {"hidden_size": "n_embd", "num_hidden_layers": "n_layer", "num_attention_heads": "n_head",
                           "intermediate_size": "n_inner", "max_position_embeddings": "n_positions"}))}


def canonical_fields(fields: dict) -> dict:
    """config.json fields with the common names (hidden_size, num_hidden_layers, ...) filled in from
    the names the model type's layout gives them (Layout.field_names)."""
    row = FAMILIES.get(fields.get("model_type"))
    return LAYOUTS[row.layout].canonical(fields) if row is not None and row.layout in LAYOUTS else fields
