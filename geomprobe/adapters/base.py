"""What every architecture adapter says about its model (METHODS.md sections 1 and 3).

An adapter is a thin, read-only view of a loaded Hugging Face model: where the decoder blocks,
the value projection, the attention output projection, the MLP and the key weights live, and how
their outputs split into heads. Shapes use TransformerLens-style names:
    values: [batch, pos, n_kv_heads, d_head]; W_K: [n_kv_heads, d_model, d_head].
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn


@dataclass(frozen=True)
class ModelShape:
    n_layers: int
    n_heads: int  # query heads H
    n_kv_heads: int  # key/value heads G (G < H under grouped-query attention)
    d_head: int
    d_model: int
    causal: bool = True
    sliding_window: int | None = None


def dequantized_weight(linear: nn.Module) -> torch.Tensor:
    """The float32 weight [out_features, in_features] of a Linear, bitsandbytes 4/8-bit included.

    bitsandbytes (checked against 0.50) keeps, after `from_pretrained(..., quantization_config=...)`:
    - Linear8bitLt: `weight` is an Int8Params whose data is the int8 matrix CB [out, in] (row-major)
      and whose `.SCB` holds the float32 absmax of each output row; W = CB * SCB[:, None] / 127.
      The first forward moves CB/SCB to `linear.state` (weight.CB/.SCB become None; weight.data
      stays CB). With has_fp16_weights the data stays float and `state.SCB` is only a cache.
    - Linear4bit: `weight` is a Params4bit of packed 4-bit codes [out*in/2, 1] with `.quant_state`
      (blocksize 64, nf4/fp4 code, absmax per block, maybe double-quantised). On CPUs with
      AVX512-BF16 the first eval forward repacks it in place for bnb's CPU kernel
      (`quant_state.packing_format_for_cpu`), which `dequantize_4bit` cannot read: handled here.
    """
    weight = linear.weight
    kind = type(weight).__name__
    if kind == "Params4bit":
        return _dequantize_params4bit(linear, weight)
    if kind == "Int8Params":
        return _dequantize_int8params(linear, weight)
    return weight.data.float()


def _not_dequantizable(linear: nn.Module, why: str):
    from geomprobe.errors import UnsupportedModelError

    return UnsupportedModelError(f"cannot dequantise {type(linear).__name__} weight: {why}")


def _dequantize_int8params(linear: nn.Module, weight) -> torch.Tensor:
    data = weight.data
    if data.dtype != torch.int8:  # has_fp16_weights, or not quantised yet: the float weight itself
        return data.float()
    scales = getattr(weight, "SCB", None)
    if scales is None:  # after the first forward bitsandbytes keeps CB/SCB in the module's state
        scales = getattr(getattr(linear, "state", None), "SCB", None)
    if scales is None:
        raise _not_dequantizable(linear, "int8 weight without its row scales (SCB)")
    if scales.numel() != data.shape[0]:
        raise _not_dequantizable(linear, f"{scales.numel()} row scales for an int8 weight of shape "
                                         f"{tuple(data.shape)}")
    return data.float() * (scales.float().reshape(-1, 1) / 127.0)


def _dequantize_params4bit(linear: nn.Module, weight) -> torch.Tensor:
    state = getattr(weight, "quant_state", None) or getattr(linear, "quant_state", None)
    if state is None:
        if getattr(weight, "bnb_quantized", False):
            raise _not_dequantizable(linear, "4-bit weight without its quant_state")
        return weight.data.float()  # not quantised yet
    if getattr(state, "packing_format_for_cpu", False):
        out = _dequantize_4bit_cpu_packed(linear, weight.data, state)
    else:
        import bitsandbytes.functional as bnbf

        out = bnbf.dequantize_4bit(weight.data, state).float()
    shape = tuple(int(n) for n in state.shape)
    if tuple(out.shape) != shape:
        raise _not_dequantizable(linear, f"dequantised to {tuple(out.shape)}, quant_state says {shape}")
    return out


def _dequantize_4bit_cpu_packed(linear: nn.Module, packed: torch.Tensor, state) -> torch.Tensor:
    """Decode bitsandbytes' AVX512-BF16 CPU layout (the inverse of bitsandbytes.functional.
    _convert_weight_packed_for_cpu, block_n=32): codes [N, K/2] in tiles of 32 rows, the low
    nibbles holding one column of a pair and the high nibbles the other; absmax [K/blocksize, N]
    in bfloat16. Decoded directly, not through bitsandbytes' own (lossy, in-place) inverse, so the
    result is exactly the weight the CPU kernel multiplies with."""
    n_out, n_in = (int(n) for n in state.shape)
    block_n, blocksize = 32, int(state.blocksize)
    code = getattr(state, "code", None)
    if (packed.dim() != 2 or tuple(packed.shape) != (n_out, n_in // 2) or n_out % block_n or n_in % blocksize
            or code is None or tuple(state.absmax.shape) != (n_in // blocksize, n_out)):
        raise _not_dequantizable(linear, f"unexpected CPU-packed 4-bit layout (weight {tuple(packed.shape)}, "
                                         f"quant_state shape {tuple(state.shape)})")
    tiles = packed.view(torch.uint8).reshape(-1, block_n)
    codes = torch.cat([tiles & 0xF, tiles >> 4], dim=-1)  # [.., 64]: low nibbles first
    codes = codes.reshape(n_out // block_n, n_in // 2, block_n, 2).transpose(1, 2).reshape(n_out, n_in)
    scale = state.absmax.float().t().repeat_interleave(blocksize, dim=1)  # [N, K]
    return code.float().to(codes.device)[codes.long()] * scale


def linear_bias(linear: nn.Module) -> torch.Tensor | None:
    return None if linear.bias is None else linear.bias.data.float()


class Adapter:
    """Base class. Subclasses set `family` and implement the module lookups below."""

    family: str = ""
    has_next_token: bool = True

    def __init__(self, model: nn.Module):
        self.model = model
        self.config = model.config
        self.shape = self._shape()

    # ---- to implement per family -------------------------------------------------------------
    def _shape(self) -> ModelShape:
        raise NotImplementedError

    def layers(self) -> list[nn.Module]:
        """The decoder (or encoder) blocks, in order."""
        raise NotImplementedError

    def attention(self, layer: int) -> nn.Module:
        """The module transformers passes to the attention function (it carries `layer_idx`)."""
        raise NotImplementedError

    def value_module(self, layer: int) -> nn.Linear:
        """The Linear whose output holds the value vectors v = W_V x + b_V."""
        raise NotImplementedError

    def output_projection(self, layer: int) -> nn.Linear:
        """The Linear whose input is the per-head attention mix z: [batch, pos, n_heads * d_head]."""
        raise NotImplementedError

    def key_module(self, layer: int) -> nn.Linear:
        """The Linear whose output holds the keys W_K x + b_K (split by `split_keys`)."""
        raise NotImplementedError

    def query_module(self, layer: int) -> nn.Linear:
        """The Linear whose output holds the queries W_Q x + b_Q (split by `split_queries`)."""
        raise NotImplementedError

    # ---- shared, overridden for fused layouts ------------------------------------------------
    def mlp_output(self, layer: int) -> nn.Module:
        """The module whose output is the MLP's contribution [batch, pos, d_model] (the block's
        `mlp`; Mixtral's is the mixture-of-experts block)."""
        return self.layers()[layer].mlp

    def attention_residual(self, layer: int) -> nn.Module:
        """The module whose output is what attention adds to the residual stream [batch, pos,
        d_model]: the output projection, or the post-attention norm after it (Gemma)."""
        return self.output_projection(layer)

    def norm_scale(self, norm: nn.Module | None) -> torch.Tensor | None:
        """The per-channel scale a normalisation multiplies by, float32 [width], or None: its
        `weight` (LayerNorm, RMSNorm); Gemma's RMSNorm multiplies by 1 + weight."""
        weight = getattr(norm, "weight", None)
        return None if weight is None else weight.detach().float()

    def attention_kinds(self) -> list[str]:
        """Per layer, "sliding" (a sliding-window layer) or "global": from config.layer_types where
        the model has one (Gemma 3: five sliding layers per global one), else every layer alike."""
        types = getattr(self.config, "layer_types", None)
        if isinstance(types, (list, tuple)) and len(types) == self.shape.n_layers:
            return ["sliding" if "sliding" in str(t) else "global" for t in types]
        return ["sliding" if self.shape.sliding_window else "global"] * self.shape.n_layers

    def split_values(self, output: torch.Tensor) -> torch.Tensor:
        """value_module output [batch, pos, out] -> values [batch, pos, n_kv_heads, d_head] (a view)."""
        s = self.shape
        return output.view(*output.shape[:-1], s.n_kv_heads, s.d_head)

    def split_keys(self, output):
        """key_module output [..., out] -> keys [..., n_kv_heads, d_head], the model's own split (a
        torch tensor or a numpy array: reshapes and indexing only)."""
        s = self.shape
        return output.reshape(*output.shape[:-1], s.n_kv_heads, s.d_head)

    def split_queries(self, output: torch.Tensor) -> torch.Tensor:
        """query_module output [batch, pos, out] -> queries [batch, pos, n_heads, d_head] (a view)."""
        s = self.shape
        return output.view(*output.shape[:-1], s.n_heads, s.d_head)

    def merge_values(self, output: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
        """value_module output with its value part replaced by `values` [batch, pos, n_kv_heads, d_head]."""
        return values.reshape(output.shape).to(output.dtype)

    def merge_keys(self, output: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        """key_module output with its key part replaced by `keys` [batch, pos, n_kv_heads, d_head]."""
        return keys.reshape(output.shape).to(output.dtype)

    def merge_queries(self, output: torch.Tensor, queries: torch.Tensor) -> torch.Tensor:
        """query_module output with its query part replaced by `queries` [batch, pos, n_heads, d_head]."""
        return queries.reshape(output.shape).to(output.dtype)

    def key_weights(self, layer: int) -> tuple[torch.Tensor, torch.Tensor | None]:
        """W_K per kv head as D x d matrices, float32 [n_kv_heads, d_model, d_head], and the key bias
        [n_kv_heads, d_head] or None. Raw weights: no LayerNorm folding; quantised weights dequantised."""
        s = self.shape
        module = self.key_module(layer)
        weight = dequantized_weight(module).view(s.n_kv_heads, s.d_head, s.d_model).transpose(1, 2)
        bias = linear_bias(module)
        return weight.contiguous(), (None if bias is None else bias.view(s.n_kv_heads, s.d_head))

    def attention_input_norm(self, layer: int) -> nn.Module | None:
        """The normalisation whose output feeds the key projection of `layer` (pre-norm blocks:
        the block's input_layernorm). Its `weight` is the scale that `fold_ln` multiplies in."""
        return getattr(self.layers()[layer], "input_layernorm", None)

    def mlp_input_norm(self, layer: int) -> nn.Module | None:
        """The normalisation whose output the MLP reads (the hook point ln2): the block's
        post_attention_layernorm in pre-norm blocks; None where the MLP reads attention's own
        input norm (Phi: one norm feeds both)."""
        return getattr(self.layers()[layer], "post_attention_layernorm", None)

    def parallel_residual(self) -> bool:
        """Whether attention and the MLP both read the block input and are added to it together
        (GPT-NeoX with use_parallel_residual, Phi): then no residual stream lies between them."""
        return False

    def mid_residual_module(self, layer: int) -> nn.Module | None:
        """A module whose output is the residual stream between attention and the MLP (BERT's
        attention block, which ends in its LayerNorm); None where the block adds attention's output
        to its input inline (pre-norm blocks: resid_mid = resid_pre + attn_out, which the MLP's
        norm reads)."""
        return None

    def normalized(self, norm: nn.Module, x: torch.Tensor) -> torch.Tensor:
        """What `norm` does to x before its own scale and bias, float32: (x - mean) / sqrt(var + eps)
        for a LayerNorm, x / sqrt(mean(x^2) + eps) for an RMSNorm (TransformerLens's hook_normalized)."""
        x = x.float()
        if isinstance(norm, nn.LayerNorm):
            x = x - x.mean(-1, keepdim=True)
        eps = getattr(norm, "eps", None)
        eps = getattr(norm, "variance_epsilon", 1e-5) if eps is None else eps
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)

    def backbone(self) -> nn.Module:
        """The base model, whose `last_hidden_state` is what the unembedding reads."""
        return self.model.base_model

    def final_norm(self) -> nn.Module | None:
        """The backbone's norm after the last block (last_hidden_state is its output), or None where
        there is none (BERT's post-norm blocks end in their own)."""
        for name in ("norm", "final_layer_norm", "final_layernorm"):  # Llama-likes, GPT-NeoX, Phi
            module = getattr(self.backbone(), name, None)
            if isinstance(module, nn.Module):
                return module
        return None

    def unembed(self) -> nn.Module | None:
        return self.model.get_output_embeddings() if self.has_next_token else None

    def check_layer(self, layer: int) -> int:
        from geomprobe.errors import ConfigError

        n = self.shape.n_layers
        if not -n <= layer < n:
            raise ConfigError(f"layer {layer} is out of range: this model has {n} layers (0-{n - 1})")
        return layer % n
