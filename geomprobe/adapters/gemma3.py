"""Gemma 3 (text): the Llama layout with Gemma's own pieces (the gemma3_text model type).

- Grouped-query attention with few kv heads of a wide head (270M: 4 query heads, 1 kv head,
  head_dim 256, so n_heads * d_head = 1024 > d_model = 640): values are [n_kv_heads, d_head] as
  for Llama; nothing assumes n_heads * d_head == d_model.
- Sliding-window and global layers (config.layer_types: five 512-token windows per global layer).
  The window is in the attention mask transformers builds per layer type, which the final-row
  capture reads; attention_kinds() names each layer's kind for the per-layer profiles.
- Query and key RMSNorm per head after q_proj / k_proj, like Qwen3, but Gemma's RMSNorm multiplies
  by 1 + weight (norm_scale): the key frame is W_K with 1 + g folded in.
- Sandwich norms: post_attention_layernorm after o_proj and post_feedforward_layernorm after the
  MLP, so what attention and the MLP add to the residual is the post-norm's output
  (attention_residual, mlp_output: the hook points attn_out and mlp_out). The pre-attention norm
  feeding the keys is input_layernorm, as in Llama; the MLP reads pre_feedforward_layernorm (ln2).
- Embeddings are multiplied by sqrt(d_model) inside the embedding module
  (Gemma3TextScaledWordEmbedding), so code that embeds tokens calls the module, not its weight.
- Attention scores are scaled by query_pre_attn_scalar ** -0.5, which transformers passes to the
  attention function as `scaling` (the final-row capture uses it).
"""

from .llama import LlamaAdapter


class Gemma3Adapter(LlamaAdapter):
    family = "llama"

    def norm_scale(self, norm):
        scale = super().norm_scale(norm)
        return None if scale is None else 1.0 + scale

    def attention_residual(self, layer):
        return self.layers()[layer].post_attention_layernorm

    def mlp_output(self, layer):
        return self.layers()[layer].post_feedforward_layernorm

    def mlp_input_norm(self, layer):
        return self.layers()[layer].pre_feedforward_layernorm
