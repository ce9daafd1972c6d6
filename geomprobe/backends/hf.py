"""The default backend: geomprobe's own hooks on the Hugging Face model.

Values come from forward hooks on the value projection; attention entropies from the
`geomprobe` attention function (SDPA for the output, plus the final query row only); the
next-token distribution from the unembedding applied to the final position alone, so the
[batch, T, vocab] logits of a plain forward are never formed. The readout "hidden" is the block
output ("resid") below the last layer and the backbone's last_hidden_state (after the final norm;
BERT has none, so there it equals "resid") at the last layer, see `hidden_states_at`.
"""

from __future__ import annotations

import numpy as np
import torch

from geomprobe.attention import ATTN_IMPLEMENTATION, FinalRowCapture, capture_final_row
from geomprobe.errors import ConfigError
from geomprobe.hooks import capture_final_token

LOG2E = 1.4426950408889634


def next_token_summary(logits: torch.Tensor, token_ids: list[int]) -> dict[str, np.ndarray]:
    """logits [batch, vocab] -> next_entropy_bits [batch] and token_probs [batch, n_tokens].

    A token of probability exactly 0 (a logit of -inf, or one that underflows) adds 0 to the
    entropy, not 0 * -inf = NaN; NaN or +inf logits give NaN, which extraction reports as an error
    (nothing is masked)."""
    logp = torch.log_softmax(logits.float(), dim=-1)
    p = logp.exp()
    entropy_bits = -torch.where(p == 0, torch.zeros_like(p), p * logp).sum(-1) * LOG2E
    out = {"next_entropy_bits": entropy_bits.cpu().numpy().astype(np.float32)}
    if token_ids:
        out["token_probs"] = logp[:, token_ids].exp().cpu().numpy().astype(np.float32)
    return out


def hidden_states_at(resid: dict[int, torch.Tensor], final_hidden: torch.Tensor, layers: list[int],
                     n_layers: int) -> torch.Tensor:
    """The readout "hidden", float32 [batch, n_layers_extracted, d_model]: transformers'
    hidden_states[l + 1] at the final token. That is the block output `resid[l]` for l < L - 1 and,
    for the last layer, the backbone's last_hidden_state (after the final norm where the model has
    one; transformers ties hidden_states[-1] to it). resid: {layer: [batch, d_model]}."""
    last = n_layers - 1
    return torch.stack([final_hidden.detach().float().cpu() if layer == last else resid[layer]
                        for layer in layers], 1)


class HFBackend:
    name = "hf"
    # Set by geomprobe.prefix.PrefixBackend while a batch runs from a prefix state:
    # fn(input_ids, attention_mask, final_index) -> the same arrays, without rerunning the blocks below it.
    from_prefix = None

    def __init__(self, loaded, layers, readouts, token_ids):
        if loaded.model.config._attn_implementation != ATTN_IMPLEMENTATION:
            raise ConfigError(f"the hf backend needs the model loaded with attn_implementation="
                              f"'{ATTN_IMPLEMENTATION}' (load_model's default), not "
                              f"'{loaded.model.config._attn_implementation}'")
        self.loaded = loaded
        self.adapter = loaded.adapter
        self.layers = list(layers)
        self.readouts = tuple(readouts)
        self.token_ids = list(token_ids)
        self.device = loaded.model.get_input_embeddings().weight.device

    def run_batch(self, input_ids, attention_mask, final_index) -> dict[str, np.ndarray]:
        """The arrays of one right-padded batch: the entry point of every batch a suite extracts
        (a full forward pass, or the run from a prefix state that geomprobe.prefix has set)."""
        if self.from_prefix is not None:
            return self.from_prefix(input_ids, attention_mask, final_index)
        return self.full_batch(input_ids, attention_mask, final_index)

    @torch.no_grad()
    def full_batch(self, input_ids, attention_mask, final_index) -> dict[str, np.ndarray]:
        adapter = self.adapter
        input_ids, attention_mask = input_ids.to(self.device), attention_mask.to(self.device)
        final_index = final_index.to(self.device)
        capture = FinalRowCapture(final_index=final_index, layers=frozenset(self.layers))
        # "hidden" is read from "resid" (and, at the last layer, from last_hidden_state below)
        hooked = tuple(dict.fromkeys("resid" if readout == "hidden" else readout for readout in self.readouts))
        with capture_final_row(capture), capture_final_token(adapter, self.layers, final_index, hooked) as store:
            out = adapter.backbone()(input_ids=input_ids, attention_mask=attention_mask, use_cache=False)
        rows = torch.arange(out.last_hidden_state.shape[0], device=out.last_hidden_state.device)
        final_hidden = out.last_hidden_state[rows, final_index.to(rows.device)]  # [batch, d_model]
        result: dict[str, np.ndarray] = {}
        for readout in self.readouts:
            if readout == "hidden":
                result[readout] = hidden_states_at(store["resid"], final_hidden, self.layers,
                                                   adapter.shape.n_layers).numpy()
            else:
                result[readout] = torch.stack([store[readout][layer] for layer in self.layers], 1).numpy()
        result["attn_entropy_bits"] = (torch.stack([capture.entropy_nats[layer] for layer in self.layers], 1)
                                       * LOG2E).float().cpu().numpy()
        result["n_visible_keys"] = torch.stack([capture.n_visible[layer] for layer in self.layers],
                                               1).cpu().numpy().astype(np.int32)
        unembed = adapter.unembed()
        if unembed is not None:
            result.update(next_token_summary(unembed(final_hidden.to(unembed.weight.device)), self.token_ids))
        return result
