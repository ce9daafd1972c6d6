"""A Hugging Face attention function that also measures the final query row (PROTOCOL.md section 1.2).

`geomprobe_attention` computes the layer's output with PyTorch SDPA, exactly as transformers'
"sdpa" implementation does, and, while a `FinalRowCapture` is active, recomputes the attention
probabilities of one query position per sequence (its final non-padding token) to record their
entropy and the number of keys that query may see. Only that row is formed, never the T x T
matrix, so long prompts cost no more memory than a plain SDPA forward.

Models are loaded with `attn_implementation="geomprobe"`; outside a capture the function is
plain SDPA.
"""

from __future__ import annotations

import contextlib
import contextvars
from dataclasses import dataclass, field

import torch
from transformers import AttentionInterface
from transformers.integrations.sdpa_attention import sdpa_attention_forward
from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

ATTN_IMPLEMENTATION = "geomprobe"


@dataclass
class FinalRowCapture:
    """Per-layer results for the query at `final_index[b]` of every sequence b.

    entropy_nats[layer]: float32 [batch, n_heads]; n_visible[layer]: int64 [batch];
    probs[layer] (only when keep_probs): float32 [batch, n_heads, kv_len].
    """

    final_index: torch.Tensor  # int64 [batch]
    layers: frozenset[int] | None = None
    keep_probs: bool = False
    entropy_nats: dict[int, torch.Tensor] = field(default_factory=dict)
    n_visible: dict[int, torch.Tensor] = field(default_factory=dict)
    probs: dict[int, torch.Tensor] = field(default_factory=dict)


_active: contextvars.ContextVar[FinalRowCapture | None] = contextvars.ContextVar("geomprobe_capture", default=None)


@contextlib.contextmanager
def capture_final_row(capture: FinalRowCapture):
    token = _active.set(capture)
    try:
        yield capture
    finally:
        _active.reset(token)


def final_row_probabilities(module, query, key, attention_mask, scaling, final_index):
    """Attention probabilities of one query per sequence, float32 [batch, n_heads, kv_len], and the
    boolean mask of keys that query may see [batch, kv_len].

    query: [batch, n_heads, q_len, d]; key: [batch, n_kv_heads, kv_len, d] (post-rotary, as the
    model computes them); attention_mask: transformers' 4D mask (bool: True = visible, or float
    additive) or None, which transformers passes only when plain causal (or, for an encoder, full)
    attention is exact.
    """
    batch, n_heads, _, d_head = query.shape
    kv_len = key.shape[2]
    rows = torch.arange(batch, device=query.device)
    q_final = query[rows, :, final_index.to(query.device), :].float()  # [batch, n_heads, d]
    groups = n_heads // key.shape[1]
    keys = key.float() if groups == 1 else key.float().repeat_interleave(groups, dim=1)
    if scaling is None:
        scaling = d_head**-0.5
    scores = torch.einsum("bhd,bhkd->bhk", q_final, keys) * scaling

    if attention_mask is None:
        positions = torch.arange(kv_len, device=query.device)
        if getattr(module, "is_causal", True):
            visible = positions[None, :] <= final_index.to(query.device)[:, None]
        else:
            visible = torch.ones(batch, kv_len, dtype=torch.bool, device=query.device)
        scores = scores.masked_fill(~visible[:, None, :], float("-inf"))
    else:
        mask_rows = attention_mask[rows, :, final_index.to(attention_mask.device), :kv_len]  # [batch, 1|H, kv]
        if mask_rows.dtype == torch.bool:
            visible = mask_rows[:, 0, :]
            scores = scores.masked_fill(~mask_rows, float("-inf"))
        else:
            mask_rows = mask_rows.float()
            visible = mask_rows[:, 0, :] > torch.finfo(torch.float32).min / 2
            scores = scores + mask_rows
    probs = torch.softmax(scores, dim=-1)
    return probs, visible


def entropy_nats(probs: torch.Tensor) -> torch.Tensor:
    """Shannon entropy along the last axis; zero-probability entries contribute 0."""
    logs = torch.where(probs > 0, probs.log(), torch.zeros_like(probs))
    return -(probs * logs).sum(-1)


def geomprobe_attention(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs):
    capture = _active.get()
    layer = getattr(module, "layer_idx", None)
    if capture is not None and (capture.layers is None or layer in capture.layers):
        with torch.no_grad():
            probs, visible = final_row_probabilities(module, query, key, attention_mask, scaling,
                                                     capture.final_index)
            capture.entropy_nats[layer] = entropy_nats(probs)
            capture.n_visible[layer] = visible.sum(-1)
            if capture.keep_probs:
                capture.probs[layer] = probs
    return sdpa_attention_forward(module, query, key, value, attention_mask, scaling=scaling, dropout=dropout,
                                  **kwargs)


AttentionInterface.register(ATTN_IMPLEMENTATION, geomprobe_attention)
AttentionMaskInterface.register(ATTN_IMPLEMENTATION, sdpa_mask)
