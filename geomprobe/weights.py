"""Weight-side inputs of the key-orthogonality analysis (METHODS.md sections 1.4 and 3).

Everything here reads or builds models (torch); the statistics themselves live in
geomprobe.analysis.key_orthogonality and only see the numpy arrays returned here.

    key_weight_stack(loaded)          -> list over layers of float32 [n_kv_heads, d_model, d_head]
    init_key_weights(loaded, seed)    -> the same for the architecture freshly initialised
    token_keys(loaded, n_tokens, seed)-> list over layers of [n_kv_heads, n_tokens, d_head] (E W_K)
    step0_source(loaded)              -> the published untrained checkpoint's spec, if the family has one
"""

from __future__ import annotations

import copy

import numpy as np
import torch

from geomprobe.errors import ConfigError
from geomprobe.families import auto_class


def _norm_scale(adapter, layer: int) -> np.ndarray | None:
    scale = adapter.norm_scale(adapter.attention_input_norm(layer))
    return None if scale is None else scale.cpu().numpy()


def key_weight_stack(loaded_or_model, fold_ln: bool = False) -> list[np.ndarray]:
    """W_K of every layer as [n_kv_heads, d_model, d_head] float32 (raw, dequantised). With
    fold_ln the rows are multiplied by the preceding norm's scale (what TransformerLens folds)."""
    from geomprobe.adapters import adapter_for

    model = getattr(loaded_or_model, "model", loaded_or_model)
    adapter = adapter_for(model)
    stack = []
    for layer in range(adapter.shape.n_layers):
        weight, _ = adapter.key_weights(layer)
        weight = weight.detach().float().cpu().numpy()
        if fold_ln:
            scale = _norm_scale(adapter, layer)
            if scale is None:
                raise ConfigError(f"fold_ln: layer {layer} has no norm scale before its keys")
            weight = weight * scale[None, :, None]
        stack.append(weight)
    return stack


def _shrunk_config(config, n_layers: int):
    """A copy of `config` with what does not touch W_K's initialisation made small: fewer layers,
    a small vocabulary and MLP, one or two experts. HF initialises every layer's W_K alike
    (normal, std = initializer_range), so the per-layer distribution is unchanged."""
    config = copy.deepcopy(config)
    for name in ("num_hidden_layers", "n_layer", "num_layers"):
        if hasattr(config, name):
            setattr(config, name, n_layers)
    if hasattr(config, "vocab_size"):
        config.vocab_size = min(config.vocab_size, 512)
    for name in ("intermediate_size", "n_inner"):
        if getattr(config, name, None):
            setattr(config, name, 64)
    if getattr(config, "num_local_experts", None):
        config.num_local_experts = 2
        config.num_experts_per_tok = min(getattr(config, "num_experts_per_tok", 1), 2)
    for name in ("pad_token_id", "bos_token_id", "eos_token_id"):
        value = getattr(config, name, None)
        if isinstance(value, int) and value >= config.vocab_size:
            setattr(config, name, None)
    config.tie_word_embeddings = False
    return config


def init_key_weights(loaded, seed: int, n_layers: int = 2) -> list[np.ndarray]:
    """W_K of the same architecture freshly initialised by transformers' own initialiser (from the
    model's config, seed `seed`): `n_layers` layers (every layer is initialised the same way)."""
    import transformers

    config = _shrunk_config(loaded.model.config, min(n_layers, loaded.adapter.shape.n_layers))
    config._attn_implementation = "eager"
    torch.manual_seed(seed)
    model_class = getattr(transformers, auto_class(loaded.family))
    model = model_class.from_config(config, dtype=torch.float32)
    try:
        return key_weight_stack(model)
    finally:
        del model


def token_keys(loaded, n_tokens: int = 256, seed: int = 0, fold_ln: bool = True) -> list[np.ndarray]:
    """The papers' token-key mode: a seeded sample of token embeddings E, passed through each
    layer's pre-attention norm (when fold_ln; the norm's centring/rescaling is not applied, only
    its scale) and projected by W_K (+ bias): list over layers of [n_kv_heads, n_tokens, d_head]."""
    embedding = loaded.model.get_input_embeddings().weight
    vocab = embedding.shape[0]
    if n_tokens < 2:
        raise ConfigError("token-key mode needs at least 2 tokens")
    rng = np.random.default_rng(seed)
    ids = torch.as_tensor(rng.choice(vocab, size=min(n_tokens, vocab), replace=False))
    tokens = embedding[ids.to(embedding.device)].detach().float().cpu().numpy()  # [n, D]
    adapter = loaded.adapter
    out = []
    for layer, weight in enumerate(key_weight_stack(loaded, fold_ln=fold_ln)):
        _, bias = adapter.key_weights(layer)
        keys = np.einsum("nD,gDd->gnd", tokens, weight)
        if bias is not None:
            keys = keys + bias.detach().float().cpu().numpy()[:, None, :]
        out.append(keys.astype(np.float32))
    return out


def step0_source(loaded) -> str | None:
    """Pythia publishes its untrained weights as revision `step0` of every hub repository; other
    model series do not."""
    source = loaded.source
    if "/pythia" in source.lower() and not source.startswith(("/", ".")):
        return f"{source}@step0"
    return None


def step0_key_weights(loaded, spec: str) -> list[np.ndarray]:
    """W_K of the untrained checkpoint `spec` (hub id@revision or a local directory)."""
    from geomprobe.models import load_model

    step0 = load_model(spec, dtype="float32", device="cpu")
    try:
        return key_weight_stack(step0)
    finally:
        del step0
