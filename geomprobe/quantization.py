"""How far a quantised model's figures can move under its quantisation error (METHODS.md section 12).

A dequantized GGUF (geomprobe.models.gguf) is the published model plus a rounding error we cannot
see: the originals are not at hand. Block quantisation (Q4_0/Q4_1: blocks of 32 weights along the
input dimension, 2^bits levels between the block's minimum and maximum) leaves each weight within
half a level of its original. `perturb_like_quantisation` draws a second model that is exactly as
far from the dequantized one as the dequantized one is from the original, in law: each weight of
every matrix moves by an independent uniform draw in [-step/2, step/2], with step = (block max -
block min) / (2^bits - 1) read off the dequantized block itself. The spread of a figure over such
copies bounds how much the quantisation moved it; a figure whose spread exceeds its distance from
the untrained copies is not resolvable on the quantised copy.

Conservative for mixed files: every matrix is treated as `bits`-bit (Q4_K_M keeps some tensors at
5, 6 or 8 bits, whose true error is smaller). Vectors (norms, biases) are left alone: GGUF stores
them in float32.

    noisy = copy.deepcopy(loaded.model)
    perturb_like_quantisation(noisy, seed=1)     # in place; returns the number of weights moved
"""

from __future__ import annotations

import torch

BLOCK = 32


@torch.no_grad()
def quantisation_step(weight: torch.Tensor, bits: int = 4, block: int = BLOCK) -> torch.Tensor:
    """The level spacing of each weight's block, same shape as `weight` [out, in]: (max - min) of its
    block of `block` consecutive inputs / (2^bits - 1). A last partial block uses its own range."""
    out_features, in_features = weight.shape
    padded = -(-in_features // block) * block
    w = weight.float()
    if padded != in_features:  # repeat the row's last value: it changes neither max nor min
        w = torch.cat([w, w[:, -1:].expand(out_features, padded - in_features)], dim=1)
    blocks = w.view(out_features, padded // block, block)
    step = (blocks.amax(-1) - blocks.amin(-1)) / (2**bits - 1)  # [out, n_blocks]
    return step.repeat_interleave(block, dim=1)[:, :in_features]


@torch.no_grad()
def perturb_like_quantisation(model: torch.nn.Module, seed: int, bits: int = 4, block: int = BLOCK) -> int:
    """Move every 2-D weight of `model` (in place) by uniform noise of half its block's quantisation
    step (see the module docstring). Tied weights move once. Returns the number of weights moved."""
    generator = torch.Generator().manual_seed(seed)
    seen: set[int] = set()
    moved = 0
    for _, param in sorted(model.named_parameters(), key=lambda item: item[0]):
        if param.dim() != 2 or id(param) in seen:
            continue
        seen.add(id(param))
        step = quantisation_step(param.data, bits, block)
        noise = (torch.rand(param.shape, generator=generator) - 0.5) * step
        param.data.add_(noise.to(param.dtype).to(param.device))
        moved += param.numel()
    return moved


__all__ = ["BLOCK", "perturb_like_quantisation", "quantisation_step"]
