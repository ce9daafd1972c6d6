"""What the released code reads (METHODS.md section 11): which columns of GPT-NeoX's fused output
and of Llama's k_proj it calls values and keys, and its "final hidden state" (with final_norm_module,
the only functions here that touch a model); also the numpy-or-torch and seeding helpers the other
paper_code modules share, kept here so that none of them imports another for them.
"""

from __future__ import annotations

import numpy as np

RELEASED_REPO = "vishalmisra/bayesian-wind-tunnel"
KINDS = ("q", "k", "v")


def _is_torch(x) -> bool:
    return type(x).__module__.startswith("torch")


def _like(array, reference):
    """`array` as the same kind (numpy or torch, dtype, device) as `reference`."""
    if _is_torch(reference):
        import torch

        return torch.as_tensor(np.asarray(array) if not _is_torch(array) else array,
                               dtype=reference.dtype, device=reference.device)
    dtype = reference.dtype if np.issubdtype(reference.dtype, np.floating) else np.float64
    return np.asarray(array, dtype=dtype)


def _generator(generator) -> np.random.Generator:
    if isinstance(generator, np.random.Generator):
        return generator
    if generator is None:
        raise ValueError("pass a numpy Generator or an int seed: the released code draws unseeded, this module never does")
    return np.random.default_rng(generator)


# ----------------------------------------------------------------------------------------------
# Layouts: which columns the code calls values and keys


def neox_split(qkv, n_heads: int, d_head: int, as_released: bool = False):
    """GPT-NeoX fused `query_key_value` output [..., 3 H d] -> (q, k, v), each [..., H, d] (views).

    The layout (what transformers' GPTNeoXAttention reads, and geomprobe's GPT-NeoX adapter) is per
    head, (H, 3, d): head h owns columns [3 d h, 3 d (h + 1)) holding its q, k and v in that order.
    The released code (`sula_pipeline/hf_activations.py`, `register_hooks` -> `qkv_hook`) reshapes
    the same output as (3, H, d) and takes index 1 as keys and 2 as values; `as_released=True`
    does that. Its "values" are then columns [2 H d, 3 H d), whose true origin
    `neox_released_blocks` gives; its interventions write back into those same columns. Works on
    numpy arrays and torch tensors (q and k are before the rotary embedding)."""
    width = qkv.shape[-1]
    if width != 3 * n_heads * d_head:
        raise ValueError(f"query_key_value output has {width} columns, expected 3 * {n_heads} * {d_head}")
    lead = tuple(qkv.shape[:-1])
    if as_released:
        parts = qkv.reshape(lead + (3, n_heads, d_head))
        return parts[..., 0, :, :], parts[..., 1, :, :], parts[..., 2, :, :]
    per_head = qkv.reshape(lead + (n_heads, 3, d_head))
    return per_head[..., 0, :], per_head[..., 1, :], per_head[..., 2, :]


def neox_released_origin(n_heads: int, d_head: int, part: str = "v") -> list[tuple[int, str, int]]:
    """For each of the H d columns of the released code's `part` ("q", "k" or "v", its reading of
    the fused output as (3, H, d); see `neox_split`), the (head, "q"/"k"/"v", index) it really is.

    Column c of part j is fused column j H d + c, which belongs to head (j H d + c) // 3d, kind
    ((j H d + c) mod 3d) // d, index c mod d. Pythia-410M (H = 16, d = 64): the "values" start at
    fused column 2048 = 10 * 192 + 128, the first column of head 10's v. So they are head 10's v in
    full (columns 0-63), then q, k and v of heads 11-15: 6 of the 16 "value heads" are values
    (of heads 10-15), 5 are queries and 5 are keys, and the values of heads 0-9 are not read."""
    j = KINDS.index(part)
    fused = j * n_heads * d_head + np.arange(n_heads * d_head)
    return [(int(c // (3 * d_head)), KINDS[int(c % (3 * d_head)) // d_head], int(c % d_head)) for c in fused]


def neox_released_blocks(n_heads: int, part: str = "v") -> list[tuple[int, str]]:
    """The released code's `part` as H blocks of d columns (its "heads"): the (true head, kind) of
    each. Every block is one whole q, k or v of one head, since j H d is a multiple of d.
    H = 16: "v" -> (10, v), (11, q), (11, k), (11, v), ..., (15, v); "k" -> (5, k), (5, v), (6, q), ...,
    (10, q), (10, k); "q" -> (0, q), (0, k), (0, v), ..., (4, v), (5, q)."""
    j = KINDS.index(part)
    return [((j * n_heads + slot) // 3, KINDS[(j * n_heads + slot) % 3]) for slot in range(n_heads)]


def llama_keys(k, n_kv_heads: int, d_head: int):
    """Llama-style `k_proj` (or `v_proj`) output [..., G d] -> [..., G, d]: the G kv heads, as
    transformers and geomprobe split it."""
    if k.shape[-1] != n_kv_heads * d_head:
        raise ValueError(f"k_proj output has {k.shape[-1]} columns, expected {n_kv_heads} * {d_head}")
    return k.reshape(tuple(k.shape[:-1]) + (n_kv_heads, d_head))


def llama_keys_as_released(k, n_heads: int, n_kv_heads: int, d_head: int):
    """Llama-style `k_proj` output [..., G d] -> [..., H, G d / H], as the released code reshapes it
    (`sula_pipeline/hf_activations.py`, `flatten_attn`): by the number of *query* heads H. It does
    the same to `v_proj`. Under GQA (G < H) each of its "heads" is a 1 / (H / G) slice of one kv
    head (`llama_released_origin`): Llama-3.2-1B (H = 32, G = 8, d = 64) gives 32 "heads" of width
    16, four per kv head. Flattening undoes it, so PCA of flattened values is unaffected; per-head
    statistics (its final-token key orthogonality, and that script's Gaussian baseline at the
    width 16) are not. Like the released code, raises where G d is not a multiple of H."""
    width = k.shape[-1]
    if width != n_kv_heads * d_head:
        raise ValueError(f"k_proj output has {width} columns, expected {n_kv_heads} * {d_head}")
    if width % n_heads:
        raise ValueError(f"the released reshape needs {width} columns divisible by n_heads={n_heads}")
    return k.reshape(tuple(k.shape[:-1]) + (n_heads, width // n_heads))


def llama_released_origin(n_heads: int, n_kv_heads: int, d_head: int) -> list[tuple[int, int, int]]:
    """For each of the released code's H Llama "heads" (`llama_keys_as_released`), the
    (kv head, first index, end index) of the slice of the true kv head it holds."""
    width = n_kv_heads * d_head // n_heads
    return [((slot * width) // d_head, (slot * width) % d_head, (slot * width) % d_head + width)
            for slot in range(n_heads)]


# ----------------------------------------------------------------------------------------------
# The "final hidden state"


FINAL_NORM_NAMES = ("final_layer_norm", "norm", "final_layernorm", "ln_f")


def final_norm_module(adapter_or_model):
    """The final normalisation of a geomprobe Adapter's backbone or a transformers model (GPT-NeoX
    `final_layer_norm`, Llama/Mistral/Qwen2 `norm`, Phi `final_layernorm`), or None (BERT)."""
    backbone = adapter_or_model.backbone() if hasattr(adapter_or_model, "backbone") else adapter_or_model.base_model
    for name in FINAL_NORM_NAMES:
        module = getattr(backbone, name, None)
        if module is not None:
            return module
    return None


def post_final_norm(adapter_or_model, resid):
    """The model's final norm applied to a residual-stream readout [..., d_model] (numpy or torch;
    returned as the same kind, numpy as float32).

    The released code's "final hidden state" is transformers' `hidden_states[-1]` at the last
    token (`paper3_llm/analyze_geometry.py`, `analyze_value_manifold`; `paper3_llm/sula_experiments.py`,
    `extract_sula_geometry`): the last block's output *after* the final norm. geomprobe's `resid`
    readout is the block output before it. geomprobe already has the post-norm readout: `hidden`
    at the last layer is the backbone's last_hidden_state (`geomprobe.backends.hf.hidden_states_at`),
    so a new run should use `--readout hidden`; this function turns a stored last-layer `resid` into
    it. Applied to a lower layer's resid it gives a logit-lens-like readout, which the released
    code never uses. A model without a final norm (BERT) returns `resid` unchanged."""
    import torch

    norm = final_norm_module(adapter_or_model)
    if norm is None:
        return resid
    weight = next(norm.parameters(), None)
    tensor = resid if _is_torch(resid) else torch.as_tensor(np.asarray(resid))
    with torch.no_grad():
        out = norm(tensor.to(dtype=weight.dtype, device=weight.device) if weight is not None else tensor)
    if _is_torch(resid):
        return out.to(resid.dtype)
    return out.float().cpu().numpy()
