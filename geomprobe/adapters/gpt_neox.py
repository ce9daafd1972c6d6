"""GPT-NeoX (Pythia): one fused query_key_value Linear per layer.

Its output dimension is laid out per head as (n_heads, 3, d_head): head h owns rows
[h*3d, h*3d + 3d) holding its query, key and value, in that order. No grouped-query attention.
Partial rotary (rotary_pct) is applied inside attention, so it does not touch W_K or values.
"""

import torch

from .base import Adapter, ModelShape, dequantized_weight, linear_bias


class GPTNeoXAdapter(Adapter):
    family = "gpt_neox"

    def _shape(self):
        c = self.config
        return ModelShape(c.num_hidden_layers, c.num_attention_heads, c.num_attention_heads,
                          c.hidden_size // c.num_attention_heads, c.hidden_size)

    def layers(self):
        return list(self.model.base_model.layers)

    def attention(self, layer):
        return self.layers()[layer].attention

    def value_module(self, layer):
        return self.attention(layer).query_key_value

    key_module = query_module = value_module

    def parallel_residual(self):
        return bool(getattr(self.config, "use_parallel_residual", True))

    def output_projection(self, layer):
        return self.attention(layer).dense

    def _per_head(self, output: torch.Tensor) -> torch.Tensor:
        s = self.shape
        return output.view(*output.shape[:-1], s.n_heads, 3, s.d_head)

    def split_values(self, output):
        return self._per_head(output)[..., 2, :]

    def split_keys(self, output):
        s = self.shape
        return output.reshape(*output.shape[:-1], s.n_heads, 3, s.d_head)[..., 1, :]

    def split_queries(self, output):
        return self._per_head(output)[..., 0, :]

    def _merge(self, output, index: int, heads):
        merged = self._per_head(output.clone())
        merged[..., index, :] = heads.to(output.dtype)
        return merged.view(output.shape)

    def merge_values(self, output, values):
        return self._merge(output, 2, values)

    def merge_keys(self, output, keys):
        return self._merge(output, 1, keys)

    def merge_queries(self, output, queries):
        return self._merge(output, 0, queries)

    def key_weights(self, layer):
        s = self.shape
        module = self.key_module(layer)
        weight = dequantized_weight(module).view(s.n_heads, 3, s.d_head, s.d_model)[:, 1]
        bias = linear_bias(module)
        return (weight.transpose(1, 2).contiguous(),
                None if bias is None else bias.view(s.n_heads, 3, s.d_head)[:, 1].contiguous())
