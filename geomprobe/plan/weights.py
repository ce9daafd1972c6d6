"""Weights: the bytes of the resident weights in a dtype, and under --quantize 8bit / 4bit (bitsandbytes)."""

from __future__ import annotations

from .architecture import Architecture
from .constants import BLOCK_4BIT, DTYPE_BYTES


def _experts_quantised() -> bool:
    """bitsandbytes replaces nn.Linear modules only: transformers >= 5 stores a mixture's experts as
    fused 3-D parameters, which stay unquantised; transformers 4 kept them as nn.Linear."""
    try:
        from importlib.metadata import version

        return int(version("transformers").split(".")[0]) < 5
    except Exception:  # noqa: BLE001
        return False


def weights_bytes(arch: Architecture, dtype: str, quantize: str | None = None) -> tuple[int, str]:
    """(bytes of the resident weights, how they were computed)."""
    b = DTYPE_BYTES[dtype]
    if quantize is None:
        return arch.n_params * b, f"{arch.n_params:,} params x {b} bytes ({dtype})"
    quantised, rows = arch.linear, arch.linear_rows
    experts_note = ""
    if arch.experts:
        if _experts_quantised():
            quantised += arch.experts
            rows += arch.experts // arch.d_model  # about one row per d_model weights
        else:
            experts_note = f"; the {arch.experts:,} fused expert weights stay in {dtype} (transformers >= 5)"
    rest = arch.n_params - quantised
    if quantize == "8bit":
        total = quantised + 4 * rows + rest * b
        how = (f"{quantised:,} linear weights x 1 byte + {rows:,} float32 row scales + {rest:,} other params "
               f"(embeddings, unembedding, norms, biases) x {b} bytes ({dtype}){experts_note}")
    else:
        blocks = -(-quantised // BLOCK_4BIT)
        total = quantised // 2 + 4 * blocks + rest * b
        how = (f"{quantised:,} linear weights x 0.5 byte (nf4) + one float32 absmax per {BLOCK_4BIT} weights "
               f"(1/16 byte each; no double quantisation, as geomprobe loads it) + {rest:,} other params x {b} bytes "
               f"({dtype}){experts_note}")
    return int(total), how
