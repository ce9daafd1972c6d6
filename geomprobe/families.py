"""The model families geomprobe reads: one row per transformers model type (no torch import).

Everything that depends on a model's family is derived from this table: the adapters registry
(geomprobe.adapters.ADAPTERS), the type -> family lookup of the model registry, the planner's
parameter layouts (geomprobe.layouts) and config-class names (geomprobe.plan), the Auto class that
builds a model (auto_class), the released code's fused-qkv split (released_fused_qkv), the model
types whose prefix reuse is proven (geomprobe.prefix.PROVEN) and the built-in tiny models
(geomprobe.models.builtin.TINY_MODELS) that every family-parametrised test runs on. No other module
names a family (tests/models/test_families.py).

Adding a family: write its adapter file (geomprobe/adapters/<name>.py) and its layout
(geomprobe/layouts.py) when none of the existing ones reads it, and add one row here with its tiny
model. The tests iterate over the rows, so the
new row is checked by every existing family test (extraction against TransformerLens and eager
attention, hooks, planning against the built model's parameter count, prefix reuse, quantisation).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Family:
    """One transformers model type.

    layout: the parameter layout, which is also the adapter family recorded in a run's manifest:
        gpt_neox (fused query_key_value, parallel residual), llama (separate q/k/v/o, gated MLP,
        grouped-query attention), phi (separate q/k/v, dense, partial rotary), gpt2 (Conv1D projections,
        a fused c_attn laid out [q | k | v], learned absolute positions), bert (encoder). Its
        parameter groups and config field names are geomprobe.layouts.LAYOUTS[layout].
    adapter: "module.Class" under geomprobe.adapters.
    config_class: the transformers config class (what a config object's class name is).
    tiny: the built-in random-init model of this type (its config overrides and note).
    bos: its tokenizers prepend a BOS token (the planner's token count).
    qkv_bias: q, k and v projections always carry biases (Qwen2), whatever attention_bias says.
    key_norm: a per-head RMSNorm on queries and keys after their projections (Qwen3); the adapter
        folds its scale into W_K (Adapter.key_weights) and the captured q.k rows are read after it.
    norm_offset: its RMSNorms multiply by 1 + weight (Gemma), not weight: every folded norm scale
        (the key norm, fold_ln) is read through Adapter.norm_scale.
    block_norms: norms per block (2; Gemma's sandwich norms around attention and MLP: 4). With
        post-norms, what a block adds to the residual is the post-norm's output (Adapter.
        attention_residual and mlp_output, the hook points attn_out and mlp_out).
    rotary: "full", "partial" (a fraction of each head) or "none" (learned absolute positions).
    prefix_reuse: blocks below an edit give the same states with and without it (geomprobe.prefix;
        tests/extraction/test_prefix_reuse.py checks every row where this is True).
    experts: the MLP is a mixture of experts (Mixtral: fused 3-D expert weights and a router).
    mlp_bias_option: the config's `mlp_bias` field adds biases to the MLP projections (Llama).
    released_fused_qkv: the papers' released code reads this type's fused query_key_value output as
        (3, H, d) blocks, so `--definitions paper-code-as-released` edits and reads other columns than
        the model's values (geomprobe.paper_code.neox_split).
    """

    model_type: str
    layout: str
    adapter: str
    config_class: str
    tiny: str
    tiny_overrides: dict = field(default_factory=dict)
    tiny_note: str = ""
    special_tokens: str = "none"  # the tiny tokenizer's: "bos" (<s> first), "cls" ([CLS] ... [SEP]), "none"
    encoder: bool = False
    bos: bool = False
    qkv_bias: bool = False
    key_norm: bool = False
    norm_offset: bool = False
    block_norms: int = 2
    rotary: str = "full"
    prefix_reuse: bool = True
    experts: bool = False
    mlp_bias_option: bool = False
    released_fused_qkv: bool = False


FAMILY_ROWS: tuple[Family, ...] = (
    Family("gpt_neox", "gpt_neox", "gpt_neox.GPTNeoXAdapter", "GPTNeoXConfig", "tiny-neox",
           dict(intermediate_size=512, rotary_pct=0.25, use_parallel_residual=True, tie_word_embeddings=False,
                bos_token_id=0, eos_token_id=0),
           "random init from a config", rotary="partial", released_fused_qkv=True),
    Family("llama", "llama", "llama.LlamaAdapter", "LlamaConfig", "tiny-llama",
           dict(intermediate_size=256, num_key_value_heads=2, bos_token_id=1, eos_token_id=0, pad_token_id=None),
           "random init, grouped-query attention", "bos", bos=True, mlp_bias_option=True),
    Family("mistral", "llama", "llama.LlamaAdapter", "MistralConfig", "tiny-mistral",
           dict(intermediate_size=256, num_key_value_heads=2, sliding_window=8, bos_token_id=1, eos_token_id=0),
           "random init, sliding window 8", "bos", bos=True),
    Family("mixtral", "llama", "llama.LlamaAdapter", "MixtralConfig", "tiny-mixtral",
           dict(intermediate_size=128, num_key_value_heads=2, num_local_experts=4, num_experts_per_tok=2,
                sliding_window=None, bos_token_id=1, eos_token_id=0),
           "random init, 4 experts", "bos", bos=True, experts=True),
    Family("qwen2", "llama", "llama.LlamaAdapter", "Qwen2Config", "tiny-qwen2",
           dict(intermediate_size=256, num_key_value_heads=2, bos_token_id=0, eos_token_id=0,
                tie_word_embeddings=False),
           "random init, q/k/v biases, grouped-query attention", qkv_bias=True),
    Family("qwen3", "llama", "llama.LlamaAdapter", "Qwen3Config", "tiny-qwen3",
           dict(intermediate_size=256, num_key_value_heads=2, head_dim=16, bos_token_id=0, eos_token_id=0,
                tie_word_embeddings=False),
           "random init, query and key RMSNorm per head, grouped-query attention", key_norm=True),
    Family("gemma3_text", "llama", "gemma3.Gemma3Adapter", "Gemma3TextConfig", "tiny-gemma3",
           dict(intermediate_size=256, num_attention_heads=4, num_key_value_heads=1, head_dim=64,
                query_pre_attn_scalar=64, sliding_window=8,
                layer_types=["sliding_attention", "sliding_attention", "sliding_attention", "full_attention"],
                tie_word_embeddings=True, bos_token_id=1, eos_token_id=0, pad_token_id=None),
           "random init, sliding window 8 on 3 of 4 layers, 1 kv head of width 64 (4 x 64 > d_model), q/k norms, "
           "sandwich norms, scaled embeddings", "bos", bos=True, key_norm=True, norm_offset=True, block_norms=4),
    Family("phi", "phi", "phi.PhiAdapter", "PhiConfig", "tiny-phi",
           dict(intermediate_size=512, partial_rotary_factor=0.4, bos_token_id=0, eos_token_id=0),
           "random init, partial rotary", rotary="partial"),
    Family("gpt2", "gpt2", "gpt2.GPT2Adapter", "GPT2Config", "tiny-gpt2",
           dict(n_inner=512, max_position_embeddings=1024, bos_token_id=0, eos_token_id=0),
           "random init, Conv1D projections, fused c_attn, learned absolute positions", rotary="none",
           prefix_reuse=True),
    Family("bert", "bert", "bert.BertAdapter", "BertConfig", "tiny-bert",
           dict(intermediate_size=512, max_position_embeddings=512, pad_token_id=4),
           "random init encoder", "cls", encoder=True, rotary="none", prefix_reuse=False),
)

FAMILIES: dict[str, Family] = {row.model_type: row for row in FAMILY_ROWS}
if len(FAMILIES) != len(FAMILY_ROWS):
    raise RuntimeError("geomprobe.families: a model type has two rows")

FAMILY_OF_TYPE: dict[str, str] = {t: row.layout for t, row in FAMILIES.items()}  # model_type -> adapter family
CONFIG_CLASS_TYPES: dict[str, str] = {row.config_class: t for t, row in FAMILIES.items()}
LLAMA_LIKE: tuple[str, ...] = tuple(t for t, row in FAMILIES.items() if row.layout == "llama")
ENCODER_LAYOUTS: frozenset[str] = frozenset(row.layout for row in FAMILY_ROWS if row.encoder)
# the wind tunnels' transformer (geomprobe.windtunnel.models builds GPT-NeoX models)
WINDTUNNEL_TYPE = "gpt_neox"


def auto_class(family: str) -> str:
    """The transformers Auto class that builds a model of this adapter family (layout): an encoder's
    base model (no LM head) or a causal language model."""
    return "AutoModel" if family in ENCODER_LAYOUTS else "AutoModelForCausalLM"


def released_fused_qkv(model_type: str) -> bool:
    """Family.released_fused_qkv of a model type (False for a type without a row)."""
    row = FAMILIES.get(model_type)
    return bool(row and row.released_fused_qkv)
BOS_TYPES: tuple[str, ...] = tuple(t for t, row in FAMILIES.items() if row.bos)
PREFIX_REUSE_TYPES: tuple[str, ...] = tuple(t for t, row in FAMILIES.items() if row.prefix_reuse)


__all__ = ["BOS_TYPES", "CONFIG_CLASS_TYPES", "ENCODER_LAYOUTS", "FAMILIES", "FAMILY_OF_TYPE", "FAMILY_ROWS",
           "LLAMA_LIKE", "PREFIX_REUSE_TYPES", "WINDTUNNEL_TYPE", "Family", "auto_class", "released_fused_qkv"]
