"""A CPU-trainable forward for transformers' MambaForCausalLM (the wind tunnels' `mamba`).

Without the CUDA kernels (mamba_ssm, causal_conv1d), transformers' MambaMixer runs its selective
scan as a Python loop that indexes one time step out of tensors of shape [batch, d_inner, T, N].
Its backward then writes a full-size gradient for every such slice: O(T^2 d_inner N) memory
traffic, 67 s for one backward at batch 64, T 68 on this project's CPU. `fast_mixers(model)` gives
each mixer of a model a forward with the same parameters and the same arithmetic, computed step
by step from [batch, d_inner] slices (`unbind`, whose backward is one stack): O(T d_inner N). The
model stays transformers' MambaForCausalLM (its weights, config and save format); only the order
in which the scan is evaluated changes, and a test checks outputs and gradients against the
library's own forward. Decoding with a cache (one token at a time) keeps the library's path.
"""

from __future__ import annotations

import types

import torch
import torch.nn.functional as F


def selective_scan(x: torch.Tensor, dt: torch.Tensor, A: torch.Tensor, B: torch.Tensor, C: torch.Tensor,
                   D: torch.Tensor) -> torch.Tensor:
    """y[b, :, t] = C_t . h_t + D x_t with h_t = exp(dt_t A) h_{t-1} + dt_t x_t B_t, h_0 = 0.

    x, dt: [batch, d_inner, T] (dt after softplus); A: [d_inner, N]; B, C: [batch, T, N]; D: [d_inner].
    Returns y: [batch, d_inner, T] (float32)."""
    batch, d_inner, _ = x.shape
    state = x.new_zeros(batch, d_inner, A.shape[-1], dtype=torch.float32)
    outputs = []
    for x_t, dt_t, B_t, C_t in zip(x.float().unbind(-1), dt.float().unbind(-1), B.float().unbind(1),
                                   C.float().unbind(1)):
        state = torch.exp(dt_t[:, :, None] * A) * state + (dt_t * x_t)[:, :, None] * B_t[:, None, :]
        outputs.append(torch.einsum("bdn,bn->bd", state, C_t))
    return torch.stack(outputs, dim=-1) + x.float() * D.float()[None, :, None]


def _forward(mixer, hidden_states: torch.Tensor, cache=None, attention_mask=None, **kwargs):
    if cache is not None or attention_mask is not None:  # decoding or padding: the library's path
        return mixer._library_forward(hidden_states, cache=cache, attention_mask=attention_mask, **kwargs)
    dtype, length = hidden_states.dtype, hidden_states.shape[1]
    projected = mixer.in_proj(hidden_states).transpose(1, 2)  # [batch, 2 d_inner, T]
    x, gate = projected.chunk(2, dim=1)
    x = F.conv1d(x, mixer.conv1d.weight, mixer.conv1d.bias, padding=mixer.conv1d.weight.shape[-1] - 1,
                 groups=mixer.intermediate_size)[:, :, :length]
    x = mixer.act(x)
    time_step, B, C = torch.split(mixer.x_proj(x.transpose(1, 2)),
                                  [mixer.time_step_rank, mixer.ssm_state_size, mixer.ssm_state_size], dim=-1)
    dt = mixer.dt_proj.weight @ time_step.transpose(1, 2)  # [batch, d_inner, T]
    dt = F.softplus(dt + mixer.dt_proj.bias.float()[:, None])
    A = -torch.exp(mixer.A_log.float())
    y = selective_scan(x, dt, A, B, C, mixer.D) * F.silu(gate)
    return mixer.out_proj(y.transpose(1, 2).to(dtype))


def fast_mixers(model) -> int:
    """Give every MambaMixer in `model` the step-by-step scan forward (instances only; the class and
    other models are untouched). Returns how many mixers were changed."""
    from transformers.models.mamba.modeling_mamba import MambaMixer

    changed = 0
    for module in model.modules():
        if isinstance(module, MambaMixer) and not hasattr(module, "_library_forward"):
            module._library_forward = module.forward
            module.forward = types.MethodType(_forward, module)
            changed += 1
    return changed
