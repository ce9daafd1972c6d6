"""Llama-like decoders: Llama, Mistral (sliding window), Mixtral (mixture-of-experts MLP), Qwen2,
Qwen3 (an RMSNorm per head on queries and keys after q_proj / k_proj).

Separate q_proj / k_proj / v_proj / o_proj; k_proj and v_proj have n_kv_heads * d_head outputs
(grouped-query attention: query head h reads kv head h // (n_heads / n_kv_heads)). The MoE MLP
of Mixtral does not change anything measured here. Mistral's sliding window is enforced by the
attention mask transformers builds, which the final-row capture reads.

Qwen3's key norm: attention reads k = g * (W_K x) / rms(W_K x) per head. The division is one scalar
per token and head, so the key frame is W_K with the norm's scale g folded in (key_weights); the
captured q.k rows are read after the norms and rotary, as attention computes them. The released
code's k_proj readout (geomprobe.paper_code) stays the projection's output, as released.
"""

import torch

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

    def query_module(self, layer):
        return self.attention(layer).q_proj

    def output_projection(self, layer):
        return self.attention(layer).o_proj

    def key_norm(self, layer):
        """Qwen3's per-head RMSNorm after k_proj, or None."""
        return getattr(self.attention(layer), "k_norm", None)

    def key_weights(self, layer: int) -> tuple[torch.Tensor, torch.Tensor | None]:
        weight, bias = super().key_weights(layer)
        scale = self.norm_scale(self.key_norm(layer))
        if scale is None:
            return weight, bias
        scale = scale.to(weight.device)  # [d_head], shared by the heads
        return (weight * scale).contiguous(), (None if bias is None else bias * scale)
