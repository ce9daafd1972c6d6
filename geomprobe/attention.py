"""A Hugging Face attention function that also measures the final query row (PROTOCOL.md section 1.2).

`geomprobe_attention` computes the layer's output with PyTorch SDPA, exactly as transformers'
"sdpa" implementation does, and, while a `FinalRowCapture` is active, recomputes the attention
probabilities of one query position per sequence (its final non-padding token) to record their
entropy and the number of keys that query may see. Only that row is formed, never the T x T
matrix, so long prompts cost no more memory than a plain SDPA forward. A `QueryRowsCapture`
(geomprobe.mechanisms) does the same for several chosen query positions and also keeps the
cosines between those post-rotary queries and every key.

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


@dataclass
class QueryRowsCapture:
    """Per-layer attention rows of several query positions per sequence, with the post-rotary
    query-key cosines behind them (paper I's Q-K alignment; see geomprobe.mechanisms).

    probs[layer]: float32 [batch, n_queries, n_heads, kv_len] (0 at keys the row may not see);
    cosine[layer]: float32 [batch, n_queries, n_heads, kv_len], cos(q_i, k_j) (NaN where not visible);
    visible[layer]: bool [batch, n_queries, kv_len]. With keep_qk also query[layer] float32
    [batch, n_queries, n_heads, d] and key[layer] float32 [batch, n_heads, kv_len, d] (kv heads
    repeated per query head). Everything is moved to the CPU.
    """

    query_index: torch.Tensor  # int64 [batch, n_queries]
    layers: frozenset[int] | None = None
    keep_qk: bool = False
    probs: dict[int, torch.Tensor] = field(default_factory=dict)
    cosine: dict[int, torch.Tensor] = field(default_factory=dict)
    visible: dict[int, torch.Tensor] = field(default_factory=dict)
    query: dict[int, torch.Tensor] = field(default_factory=dict)
    key: dict[int, torch.Tensor] = field(default_factory=dict)


_active: contextvars.ContextVar[FinalRowCapture | None] = contextvars.ContextVar("geomprobe_capture", default=None)
_active_rows: contextvars.ContextVar[QueryRowsCapture | None] = contextvars.ContextVar("geomprobe_rows",
                                                                                      default=None)


@contextlib.contextmanager
def capture_final_row(capture: FinalRowCapture):
    token = _active.set(capture)
    try:
        yield capture
    finally:
        _active.reset(token)


@contextlib.contextmanager
def capture_query_rows(capture: QueryRowsCapture):
    """While active, every layer run through the `geomprobe` attention function records the rows
    of `capture.query_index` (the model must be loaded with attn_implementation="geomprobe")."""
    token = _active_rows.set(capture)
    try:
        yield capture
    finally:
        _active_rows.reset(token)


def query_row_probabilities(module, query, key, attention_mask, scaling, query_index):
    """Attention probabilities of chosen query positions, recomputed from the model's own q and k.

    query: [batch, n_heads, q_len, d]; key: [batch, n_kv_heads, kv_len, d] (post-rotary, as the
    model computes them); query_index: int64 [batch, n_queries], positions of the query rows;
    attention_mask: transformers' 4D mask (bool: True = visible, or float additive) or None, which
    transformers passes only when plain causal (or, for an encoder, full) attention is exact.
    Returns probs float32 [batch, n_heads, n_queries, kv_len], the boolean mask of keys each row
    may see [batch, n_queries, kv_len], the query rows float32 [batch, n_heads, n_queries, d] and
    the keys float32 [batch, n_heads, kv_len, d] (grouped-query kv heads repeated per query head).
    """
    batch, n_heads, _, d_head = query.shape
    kv_len = key.shape[2]
    query_index = query_index.to(query.device)
    rows = torch.arange(batch, device=query.device)[:, None]  # [batch, 1]
    q_rows = query[rows, :, query_index, :].float().transpose(1, 2)  # [batch, n_heads, n_queries, d]
    groups = n_heads // key.shape[1]
    keys = key.float() if groups == 1 else key.float().repeat_interleave(groups, dim=1)
    if scaling is None:
        scaling = d_head**-0.5
    scores = torch.einsum("bhqd,bhkd->bhqk", q_rows, keys) * scaling

    if attention_mask is None:
        positions = torch.arange(kv_len, device=query.device)
        if getattr(module, "is_causal", True):
            visible = positions[None, None, :] <= query_index[:, :, None]
        else:
            visible = torch.ones(batch, query_index.shape[1], kv_len, dtype=torch.bool, device=query.device)
        scores = scores.masked_fill(~visible[:, None], float("-inf"))
    else:
        mask_rows = attention_mask[rows.to(attention_mask.device), :, query_index.to(attention_mask.device), :kv_len]
        mask_rows = mask_rows.transpose(1, 2)  # [batch, 1|H, n_queries, kv]
        if mask_rows.dtype == torch.bool:
            visible = mask_rows[:, 0]
            scores = scores.masked_fill(~mask_rows, float("-inf"))
        else:
            mask_rows = mask_rows.float()
            visible = mask_rows[:, 0] > torch.finfo(torch.float32).min / 2
            scores = scores + mask_rows
    probs = torch.softmax(scores, dim=-1)
    return probs, visible, q_rows, keys


def final_row_probabilities(module, query, key, attention_mask, scaling, final_index):
    """Attention probabilities of one query per sequence, float32 [batch, n_heads, kv_len], and the
    boolean mask of keys that query may see [batch, kv_len] (query_row_probabilities at final_index)."""
    probs, visible, _, _ = query_row_probabilities(module, query, key, attention_mask, scaling, final_index[:, None])
    return probs[:, :, 0], visible[:, 0]


def entropy_nats(probs: torch.Tensor) -> torch.Tensor:
    """Shannon entropy along the last axis; zero-probability entries contribute 0."""
    logs = torch.where(probs > 0, probs.log(), torch.zeros_like(probs))
    return -(probs * logs).sum(-1)


def _record_rows(capture: QueryRowsCapture, layer, module, query, key, attention_mask, scaling) -> None:
    probs, visible, q_rows, keys = query_row_probabilities(module, query, key, attention_mask, scaling,
                                                           capture.query_index)
    cosine = torch.einsum("bhqd,bhkd->bhqk", torch.nn.functional.normalize(q_rows, dim=-1),
                          torch.nn.functional.normalize(keys, dim=-1))
    cosine = cosine.masked_fill(~visible[:, None], float("nan"))
    capture.probs[layer] = probs.transpose(1, 2).cpu()
    capture.cosine[layer] = cosine.transpose(1, 2).cpu()
    capture.visible[layer] = visible.cpu()
    if capture.keep_qk:
        capture.query[layer] = q_rows.transpose(1, 2).cpu()
        capture.key[layer] = keys.cpu()


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
    rows = _active_rows.get()
    if rows is not None and (rows.layers is None or layer in rows.layers):
        with torch.no_grad():
            _record_rows(rows, layer, module, query, key, attention_mask, scaling)
    return sdpa_attention_forward(module, query, key, value, attention_mask, scaling=scaling, dropout=dropout,
                                  **kwargs)


AttentionInterface.register(ATTN_IMPLEMENTATION, geomprobe_attention)
AttentionMaskInterface.register(ATTN_IMPLEMENTATION, sdpa_mask)
