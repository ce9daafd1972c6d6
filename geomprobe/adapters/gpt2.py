"""GPT-2: Conv1D projections, one fused c_attn per layer, learned absolute positions.

transformers' Conv1D is a Linear whose weight is stored transposed, [in, out] (y = x W + b), so
W_K is read from it without nn.Linear's transpose. c_attn's output [batch, pos, 3 * d_model] is
laid out [q | k | v], each d_model wide with the heads contiguous inside it: head h's key is
columns D + h*d .. D + (h+1)*d, its value 2D + h*d .. 2D + (h+1)*d. No grouped-query attention.
Positions are a learned embedding (wpe) added to the token embedding before block 0, so no
rotation touches W_K or the values. Pre-norm blocks: ln_1 feeds attention, ln_2 the MLP, ln_f
follows the last block; the unembedding is tied to the token embedding.

Quantised by bitsandbytes, c_attn is no longer a Conv1D: transformers replaces it by a
bitsandbytes Linear holding the transposed weight [out, in], read as any Linear.
"""

import torch
from torch import nn
from transformers.pytorch_utils import Conv1D

from .base import Adapter, ModelShape, dequantized_weight, linear_bias


def weight_in_out(module: nn.Module) -> torch.Tensor:
    """A projection's float32 weight as [in_features, out_features] (y = x W + b): a Conv1D's own,
    a Linear's (bitsandbytes' included, dequantised) transposed."""
    weight = dequantized_weight(module)
    return weight if isinstance(module, Conv1D) else weight.t()


class GPT2Adapter(Adapter):
    family = "gpt2"

    def _shape(self):
        c = self.config
        return ModelShape(c.num_hidden_layers, c.num_attention_heads, c.num_attention_heads,
                          c.hidden_size // c.num_attention_heads, c.hidden_size)

    def layers(self):
        return list(self.model.base_model.h)

    def attention(self, layer):
        return self.layers()[layer].attn

    def value_module(self, layer):
        return self.attention(layer).c_attn

    key_module = query_module = value_module

    def output_projection(self, layer):
        return self.attention(layer).c_proj

    def attention_input_norm(self, layer):
        return self.layers()[layer].ln_1

    def mlp_input_norm(self, layer):
        return self.layers()[layer].ln_2

    def final_norm(self):
        return self.backbone().ln_f

    def _part(self, output, index: int):
        """The q (0), k (1) or v (2) columns of c_attn's output, split into heads [..., n_heads, d_head]."""
        s = self.shape
        part = output[..., index * s.d_model:(index + 1) * s.d_model]
        return part.reshape(*part.shape[:-1], s.n_heads, s.d_head)

    def split_values(self, output):
        return self._part(output, 2)

    def split_keys(self, output):
        return self._part(output, 1)

    def split_queries(self, output):
        return self._part(output, 0)

    def _merge(self, output, index: int, heads):
        D = self.shape.d_model
        merged = output.clone()
        merged[..., index * D:(index + 1) * D] = heads.reshape(*output.shape[:-1], D).to(output.dtype)
        return merged

    def merge_values(self, output, values):
        return self._merge(output, 2, values)

    def merge_keys(self, output, keys):
        return self._merge(output, 1, keys)

    def merge_queries(self, output, queries):
        return self._merge(output, 0, queries)

    def key_weights(self, layer):
        s = self.shape
        module = self.key_module(layer)
        weight = weight_in_out(module)[:, s.d_model:2 * s.d_model]  # [d_model, n_heads * d_head]
        bias = linear_bias(module)
        return (weight.reshape(s.d_model, s.n_heads, s.d_head).permute(1, 0, 2).contiguous(),
                None if bias is None else bias[s.d_model:2 * s.d_model].reshape(s.n_heads, s.d_head).contiguous())
