"""Llama-like decoders: Llama, Mistral (sliding window), Mixtral (mixture-of-experts MLP), Qwen2.

Separate q_proj / k_proj / v_proj / o_proj; k_proj and v_proj have n_kv_heads * d_head outputs
(grouped-query attention: query head h reads kv head h // (n_heads / n_kv_heads)). The MoE MLP
of Mixtral does not change anything measured here. Mistral's sliding window is enforced by the
attention mask transformers builds, which the final-row capture reads.
"""

from .base import Adapter, ModelShape


class LlamaAdapter(Adapter):
    family = "llama"

    def _shape(self):
        c = self.config
        d_head = getattr(c, "head_dim", None) or c.hidden_size // c.num_attention_heads
        return ModelShape(c.num_hidden_layers, c.num_attention_heads,
                          getattr(c, "num_key_value_heads", None) or c.num_attention_heads, d_head, c.hidden_size,
                          sliding_window=getattr(c, "sliding_window", None))

    def layers(self):
        return list(self.model.base_model.layers)

    def attention(self, layer):
        return self.layers()[layer].self_attn

    def value_module(self, layer):
        return self.attention(layer).v_proj

    def key_module(self, layer):
        return self.attention(layer).k_proj

    def output_projection(self, layer):
        return self.attention(layer).o_proj
