"""Phi (Phi-1.5, Phi-2): the Llama layout (separate q/k/v projections, here with biases) but the
attention output projection is called `dense`.

Rotary embedding covers only the first partial_rotary_factor of each head (0.4 for Phi-2);
it is applied inside attention, so W_K and the values are untouched by it. Attention and the MLP
both read the one input_layernorm and are added to the block input together (a parallel
residual), so there is no ln2 and no resid_mid hook point.
"""

from .llama import LlamaAdapter


class PhiAdapter(LlamaAdapter):
    family = "phi"

    def output_projection(self, layer):
        return self.attention(layer).dense

    def mlp_input_norm(self, layer):
        return None  # the MLP reads input_layernorm's output, as attention does

    def parallel_residual(self):
        return True
