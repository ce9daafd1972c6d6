"""BERT-style encoders (BERT, MiniLM): static geometry only.

Bidirectional attention, so there is no next-token distribution: extraction records values and
attention entropies at the final token ([SEP]) but no next-token entropy.
"""

from .base import Adapter, ModelShape


class BertAdapter(Adapter):
    family = "bert"
    has_next_token = False

    def _shape(self):
        c = self.config
        return ModelShape(c.num_hidden_layers, c.num_attention_heads, c.num_attention_heads,
                          c.hidden_size // c.num_attention_heads, c.hidden_size, causal=False)

    def layers(self):
        return list(self.model.base_model.encoder.layer)

    def attention(self, layer):
        return self.layers()[layer].attention.self

    def value_module(self, layer):
        return self.attention(layer).value

    def key_module(self, layer):
        return self.attention(layer).key

    def query_module(self, layer):
        return self.attention(layer).query

    def output_projection(self, layer):
        return self.layers()[layer].attention.output.dense

    def mlp_output(self, layer):
        # the feed-forward's second Linear, before the residual add and LayerNorm of BertOutput
        return self.layers()[layer].output.dense

    def mlp_input_norm(self, layer):
        # the LayerNorm closing the attention block (BertSelfOutput), whose output the MLP reads
        return self.layers()[layer].attention.output.LayerNorm

    def mid_residual_module(self, layer):
        return self.layers()[layer].attention.output

    def attention_input_norm(self, layer):
        # post-norm: a block's input is the previous block's output LayerNorm (embeddings' for layer 0)
        if layer == 0:
            return self.model.base_model.embeddings.LayerNorm
        return self.layers()[layer - 1].output.LayerNorm
