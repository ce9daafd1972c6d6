"""Phi (Phi-1.5, Phi-2): separate q/k/v projections with biases, output projection `dense`.

Rotary embedding covers only the first partial_rotary_factor of each head (0.4 for Phi-2);
it is applied inside attention, so W_K and the values are untouched by it.
"""

from .base import Adapter, ModelShape


class PhiAdapter(Adapter):
    family = "phi"

    def _shape(self):
        c = self.config
        n_kv = getattr(c, "num_key_value_heads", None) or c.num_attention_heads
        return ModelShape(c.num_hidden_layers, c.num_attention_heads, n_kv,
                          c.hidden_size // c.num_attention_heads, c.hidden_size)

    def layers(self):
        return list(self.model.base_model.layers)

    def attention(self, layer):
        return self.layers()[layer].self_attn

    def value_module(self, layer):
        return self.attention(layer).v_proj

    def key_module(self, layer):
        return self.attention(layer).k_proj

    def output_projection(self, layer):
        return self.attention(layer).dense
