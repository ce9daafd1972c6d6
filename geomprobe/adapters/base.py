"""What every architecture adapter says about its model (PROTOCOL.md sections 1 and 3).

An adapter is a thin, read-only view of a loaded Hugging Face model: where the decoder blocks,
the value projection, the attention output projection and the key weights live, and how their
outputs split into heads. Shapes use TransformerLens-style names:
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
    """The float32 weight [out_features, in_features] of a Linear, bitsandbytes 4/8-bit included."""
    weight = linear.weight
    kind = type(weight).__name__
    if kind == "Params4bit":
        import bitsandbytes.functional as bnbf

        return bnbf.dequantize_4bit(weight.data, weight.quant_state).float()
    if kind == "Int8Params":
        scales = getattr(weight, "SCB", None)
        if scales is None:
            scales = getattr(linear.state, "SCB", None)
        if scales is None:  # not yet quantised (still float)
            return weight.data.float()
        return weight.data.float() * scales.float()[:, None] / 127.0
    return weight.data.float()


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
        raise NotImplementedError

    # ---- shared, overridden for fused layouts ------------------------------------------------
    def split_values(self, output: torch.Tensor) -> torch.Tensor:
        """value_module output [batch, pos, out] -> values [batch, pos, n_kv_heads, d_head] (a view)."""
        s = self.shape
        return output.view(*output.shape[:-1], s.n_kv_heads, s.d_head)

    def merge_values(self, output: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
        """value_module output with its value part replaced by `values` [batch, pos, n_kv_heads, d_head]."""
        return values.reshape(output.shape).to(output.dtype)

    def key_weights(self, layer: int) -> tuple[torch.Tensor, torch.Tensor | None]:
        """W_K per kv head as D x d matrices, float32 [n_kv_heads, d_model, d_head], and the key bias
        [n_kv_heads, d_head] or None. Raw weights: no LayerNorm folding; quantised weights dequantised."""
        s = self.shape
        module = self.key_module(layer)
        weight = dequantized_weight(module).view(s.n_kv_heads, s.d_head, s.d_model).transpose(1, 2)
        bias = linear_bias(module)
        return weight.contiguous(), (None if bias is None else bias.view(s.n_kv_heads, s.d_head))

    def backbone(self) -> nn.Module:
        """The base model, whose `last_hidden_state` is what the unembedding reads."""
        return self.model.base_model

    def unembed(self) -> nn.Module | None:
        return self.model.get_output_embeddings() if self.has_next_token else None

    def check_layer(self, layer: int) -> int:
        from geomprobe.errors import ConfigError

        n = self.shape.n_layers
        if not -n <= layer < n:
            raise ConfigError(f"layer {layer} is out of range: this model has {n} layers (0-{n - 1})")
        return layer % n
