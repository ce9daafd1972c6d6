"""geomprobe's attention function: PyTorch SDPA, plus whatever the active attention captures
record (METHODS.md section 1.2).

    capture = FinalRowCapture(final_index=final_index)   # int64 [batch]
    with capture_final_row(capture):                      # or capture_attention(any capture)
        loaded.model(**inputs)                            # the model loaded with attn_implementation="geomprobe"
    capture.entropy_nats[layer]                           # float32 [batch, n_heads]

`geomprobe_attention` computes the layer's output exactly as transformers' "sdpa" implementation
does and hands the layer's post-rotary query [batch, n_heads, q_len, d] and key, value [batch,
n_kv_heads, kv_len, d] to every capture active in the current context (one ContextVar holds
them, innermost last), through `capture.record(layer, module, query, key, value, attention_mask,
scaling, dropout)`. A capture that returns an (output, weights) pair supplies the layer's result
in place of SDPA (the innermost such capture wins; the gradient capture of
geomprobe.gradient_dynamics does this, to keep its probabilities in the autograd graph); the
others only observe, under no_grad.

- `FinalRowCapture` recomputes the attention probabilities of one query position per sequence
  (its final non-padding token) and records their entropy and the number of keys that query may
  see. Only that row is formed, never the T x T matrix, so long prompts cost no more memory than a
  plain SDPA forward.
- `QueryRowsCapture` (geomprobe.mechanisms) does the same for several chosen query positions and
  also keeps the cosines between those post-rotary queries and every key.

Models are loaded with `attn_implementation="geomprobe"`; outside a capture the function is
plain SDPA.
"""

from __future__ import annotations

import contextlib
import contextvars
from dataclasses import dataclass, field
from typing import Protocol

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

    def record(self, layer, module, query, key, value, attention_mask, scaling, dropout=0.0) -> None:
        if self.layers is not None and layer not in self.layers:
            return
        with torch.no_grad():
            probs, visible = final_row_probabilities(module, query, key, attention_mask, scaling, self.final_index)
            self.entropy_nats[layer] = entropy_nats(probs)
            self.n_visible[layer] = visible.sum(-1)
            if self.keep_probs:
                self.probs[layer] = probs


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

    def record(self, layer, module, query, key, value, attention_mask, scaling, dropout=0.0) -> None:
        if self.layers is not None and layer not in self.layers:
            return
        with torch.no_grad():
            probs, visible, q_rows, keys = query_row_probabilities(module, query, key, attention_mask, scaling,
                                                                   self.query_index)
            cosine = torch.einsum("bhqd,bhkd->bhqk", torch.nn.functional.normalize(q_rows, dim=-1),
                                  torch.nn.functional.normalize(keys, dim=-1))
            cosine = cosine.masked_fill(~visible[:, None], float("nan"))
            self.probs[layer] = probs.transpose(1, 2).cpu()
            self.cosine[layer] = cosine.transpose(1, 2).cpu()
            self.visible[layer] = visible.cpu()
            if self.keep_qk:
                self.query[layer] = q_rows.transpose(1, 2).cpu()
                self.key[layer] = keys.cpu()


class AttentionCapture(Protocol):
    """Anything with this method can be made active with `capture_attention`."""

    def record(self, layer: int | None, module, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
               attention_mask: torch.Tensor | None, scaling: float | None,
               dropout: float) -> tuple[torch.Tensor, torch.Tensor | None] | None: ...


# The attention captures active in this context, innermost last: the one place they live.
_active: contextvars.ContextVar[tuple[AttentionCapture, ...]] = contextvars.ContextVar("geomprobe_attention_captures",
                                                                                       default=())


@contextlib.contextmanager
def capture_attention(capture: AttentionCapture):
    """While active, every layer run through the `geomprobe` attention function calls
    `capture.record(...)` (the model must use attn_implementation="geomprobe")."""
    token = _active.set((*_active.get(), capture))
    try:
        yield capture
    finally:
        _active.reset(token)


def capture_final_row(capture: FinalRowCapture):
    """capture_attention for a FinalRowCapture: entropies of the final query rows."""
    return capture_attention(capture)


def capture_query_rows(capture: QueryRowsCapture):
    """capture_attention for a QueryRowsCapture: the rows of `capture.query_index`."""
    return capture_attention(capture)


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


def pattern_probabilities(module, query, key, attention_mask, scaling, query_index=None):
    """The attention pattern, float32 [batch, n_heads, n_queries, kv_len]: every query row
    (query_index None) or those at query_index (int64 [batch, n_queries]), recomputed from the
    model's own post-rotary q and k as query_row_probabilities does. A row that may see no key (a
    left-padding query) is all zeros, not NaN."""
    if query_index is None:
        batch, _, q_len, _ = query.shape
        query_index = torch.arange(q_len, device=query.device).expand(batch, q_len)
    probs, visible, _, _ = query_row_probabilities(module, query, key, attention_mask, scaling, query_index)
    return probs.masked_fill(~visible.any(-1)[:, None, :, None], 0.0)


def final_row_probabilities(module, query, key, attention_mask, scaling, final_index):
    """Attention probabilities of one query per sequence, float32 [batch, n_heads, kv_len], and the
    boolean mask of keys that query may see [batch, kv_len] (query_row_probabilities at final_index)."""
    probs, visible, _, _ = query_row_probabilities(module, query, key, attention_mask, scaling, final_index[:, None])
    return probs[:, :, 0], visible[:, 0]


def entropy_nats(probs: torch.Tensor) -> torch.Tensor:
    """Shannon entropy along the last axis; zero-probability entries contribute 0."""
    logs = torch.where(probs > 0, probs.log(), torch.zeros_like(probs))
    return -(probs * logs).sum(-1)


def geomprobe_attention(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs):
    layer = getattr(module, "layer_idx", None)
    supplied = None
    for capture in _active.get():
        result = capture.record(layer, module, query, key, value, attention_mask, scaling, dropout)
        if result is not None:
            supplied = result
    if supplied is not None:
        return supplied
    return sdpa_attention_forward(module, query, key, value, attention_mask, scaling=scaling, dropout=dropout,
                                  **kwargs)


AttentionInterface.register(ATTN_IMPLEMENTATION, geomprobe_attention)
AttentionMaskInterface.register(ATTN_IMPLEMENTATION, sdpa_mask)
