"""Activations and time: the peak activation bytes of one prompt and the FLOPs of a sweep (the
formulas Plan.lines() quotes), and the byte and time formats the plan prints them in."""

from __future__ import annotations

from .architecture import Architecture
from .constants import DTYPE_BYTES, GiB
from .context import Passes


def activation_per_prompt(arch: Architecture, T: int, dtype: str, device_kind: str, layers: int, width: int,
                          backend: str = "hf", full_logits: bool = False) -> tuple[int, str]:
    """Peak activation bytes of one prompt of T tokens in a batch, and the formula."""
    b = DTYPE_BYTES[dtype]
    a = arch
    mlp = (3 if a.gated else 2) * a.d_ff
    per_token = 4 * a.d_model + (2 * a.n_heads + 2 * a.n_kv_heads) * a.d_head + mlp
    stream = T * per_token * b
    eager = backend == "tl"
    mask = T * T
    scores = 2 * a.n_heads * T * T * max(b, 4 if eager else b) if (device_kind == "cpu" or eager) else 0
    capture = a.n_heads * T * a.d_head * 4 + 3 * a.n_heads * T * 4
    readouts = layers * width * 4
    logit_positions = T if (eager or full_logits) else 1
    logits = 3 * a.vocab * 4 * logit_positions if a.causal else 0
    router = T * a.n_experts * 4 if a.n_experts else 0
    total = stream + mask + scores + capture + readouts + logits + router
    how = (f"T x (4 d_model + (2 heads + 2 kv heads) d_head + {'3' if a.gated else '2'} d_ff) x {b} bytes = {T} x "
           f"{per_token:,} x {b}" + (" + scores and probabilities 2 heads T^2" if scores else "")
           + " + mask T^2 + final-row capture heads x T x d_head x 4"
           + (f" + readouts {layers} layers x {width} floats x 4" if layers else "")
           + (f" + logits 3 x vocab x 4{' x T' if logit_positions > 1 else ''}" if logits else ""))
    return int(total), how


def sweep_flops(arch: Architecture, sweep: Passes) -> float:
    """2 x active matmul params x tokens + the final-position unembedding + causal attention."""
    a = arch
    dense = 2.0 * a.matmul_params * sweep.tokens * sweep.blocks
    positions = sweep.tokens if sweep.full_logits else sweep.n_prompts
    unembed = 2.0 * a.vocab * a.d_model * positions if a.causal else 0.0
    T = sweep.lengths.mean
    attention = 2.0 * a.n_layers * a.n_heads * a.d_head * T * T * sweep.n_prompts * sweep.blocks  # 2 x 2 x H dh T^2 / 2
    return dense + unembed + attention


def _fmt_bytes(n: float | None) -> str:
    if n is None:
        return "unknown"
    if n >= GiB:
        return f"{n / GiB:.1f} GiB"
    if n >= 2**20:
        return f"{n / 2**20:.1f} MiB"
    return f"{n / 1024:.1f} KiB"


def _fmt_range(low: float, high: float) -> str:
    return "under 1 s" if high < 1 else f"{_fmt_time(low)} - {_fmt_time(high)}"


def _fmt_time(seconds: float) -> str:
    if seconds < 1:
        return "under 1 s"
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 2 * 3600:
        return f"{seconds / 60:.0f} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


def _fmt_n(n: float) -> str:
    return f"{round(n):,}"
