"""The cross-check backend: the same arrays as the hf backend, read through TransformerLens 4.

    backend = TLBackend(loaded, layers=[0, 1], readouts=("values", "z"), token_ids=[42])
    arrays = backend.run_batch(input_ids, attention_mask, final_index)   # right-padded batch

It boots a `TransformerBridge` on its own copy of the model, loaded again from `loaded.source`
(same revision, dtype, device and quantisation) with eager attention, because the bridge
rewires the model it wraps and needs eager attention; `loaded.model` is never touched. Weights
are raw (no LayerNorm folding, no centering). Forward hooks keep only the final-token slice of
each activation (METHODS.md section 1), so arrays match `HFBackend.run_batch`:

    values             float32 [batch, n_layers, n_kv_heads, d_head]  blocks.{l}.attn.hook_v
    attn_entropy_bits  float32 [batch, n_layers, n_heads]             blocks.{l}.attn.hook_attn_scores
    n_visible_keys     int32   [batch, n_layers]                      (keys the mask lets through)
    z                  float32 [batch, n_layers, n_heads, d_head]     blocks.{l}.attn.hook_z
    resid              float32 [batch, n_layers, d_model]             blocks.{l}.hook_resid_post
    hidden             float32 [batch, n_layers, d_model]             blocks.{l}.hook_resid_post, and
                                                   ln_final.hook_out (the final norm's output) for l = L-1
    next_entropy_bits  float32 [batch]; token_probs float32 [batch, n_tokens]   (final logits)

How it differs from the hf backend: the bridge recomputes attention itself (its own scores,
mask and softmax, not geomprobe's attention function) and forms the full T x T pattern of
every layer, so it needs more memory on long prompts, and the model is held twice while it
runs. The entropy is taken from the masked scores at `hook_attn_scores` with a float32
softmax, which is what `hook_pattern` holds before the bridge casts it to the model dtype.
Padding: the batch's attention_mask goes to the bridge, which hands it to the model's own mask
builder (padding, causality and sliding windows in one 4D mask); right padding leaves the
positions of real tokens unchanged. Causal language models only: encoders raise ConfigError.
Models with sliding-window and global layers interleaved (Gemma 3): TransformerLens 4.3 windows
the global layers too, so a batch with a sequence longer than the window raises ConfigError.
"""

from __future__ import annotations

import numpy as np
import torch

from geomprobe.errors import ConfigError

LOG2E = 1.4426950408889634  # bits per nat


def _final_rows(tensor: torch.Tensor, final_index: torch.Tensor) -> torch.Tensor:
    """tensor [batch, pos, ...] -> float32 [batch, ...] at pos = final_index[b], on the CPU."""
    rows = torch.arange(tensor.shape[0], device=tensor.device)
    return tensor[rows, final_index.to(tensor.device)].detach().float().cpu()


class TLBackend:
    name = "tl"

    def __init__(self, loaded, layers, readouts, token_ids):
        adapter = loaded.adapter
        if not adapter.has_next_token or not adapter.shape.causal:
            raise ConfigError(f"the tl backend runs causal language models only, not {loaded.spec} "
                              f"({adapter.family}); use the hf backend")
        self.shape = adapter.shape
        self.layers = list(layers)
        self.readouts = tuple(readouts)
        self.token_ids = list(token_ids)
        kinds = adapter.attention_kinds()
        # TransformerLens 4.3's bridge masks every layer of a model with interleaved sliding-window
        # and global layers (Gemma 3) with the window (measured on tiny-gemma3): exact only while no
        # sequence is longer than the window
        self.mixed_window = adapter.shape.sliding_window if len(set(kinds)) > 1 else None
        self.bridge = _boot_bridge(loaded)

    @torch.no_grad()
    def run_batch(self, input_ids, attention_mask, final_index) -> dict[str, np.ndarray]:
        if self.mixed_window is not None and int(final_index.max()) + 1 > self.mixed_window:
            raise ConfigError(f"the tl backend cannot read prompts longer than the {self.mixed_window}-token sliding "
                              f"window of a model with sliding and global layers (this batch reaches "
                              f"{int(final_index.max()) + 1} tokens): TransformerLens applies the window to the global "
                              "layers too; use the hf backend, or --max-tokens at most the window")
        device = self.bridge.cfg.device
        input_ids, attention_mask = input_ids.to(device), attention_mask.to(device)
        final_index = final_index.to(device)
        rows = torch.arange(input_ids.shape[0], device=device)
        store: dict[str, dict[int, torch.Tensor]] = {name: {} for name in (*self.readouts, "scores", "visible")}

        def keep(name, layer):
            def hook(tensor, hook):
                store[name][layer] = _final_rows(tensor, final_index)

            return hook

        def keep_final_query(layer):
            def hook(tensor, hook):  # pre-softmax scores [batch, heads, q_pos, k_pos], mask added
                scores = tensor[rows, :, final_index.to(tensor.device)].detach()
                # A masked key's score is the dtype's most negative value (or -inf). A NaN score counts
                # as visible, so it reaches the entropy (and the error) instead of being masked away.
                store["visible"][layer] = ~(scores[:, 0] <= torch.finfo(scores.dtype).min / 2).cpu()
                store["scores"][layer] = scores.float().cpu()

            return hook

        hooks = []
        for layer in self.layers:
            hooks.append((f"blocks.{layer}.attn.hook_attn_scores", keep_final_query(layer)))
            if "values" in self.readouts:
                hooks.append((f"blocks.{layer}.attn.hook_v", keep("values", layer)))
            if "z" in self.readouts:
                hooks.append((f"blocks.{layer}.attn.hook_z", keep("z", layer)))
            if "resid" in self.readouts:
                hooks.append((f"blocks.{layer}.hook_resid_post", keep("resid", layer)))
            if "hidden" in self.readouts:
                # hook_out, not hook_normalized: the latter is before the norm's weight and bias
                point = "ln_final.hook_out" if layer == self.shape.n_layers - 1 else f"blocks.{layer}.hook_resid_post"
                hooks.append((point, keep("hidden", layer)))

        # Only the final positions' logits are formed (transformers' logits_to_keep with indices).
        positions = torch.unique(final_index)
        logits = self.bridge.run_with_hooks(input_ids, fwd_hooks=hooks, attention_mask=attention_mask,
                                            logits_to_keep=positions, use_cache=False)
        column = torch.searchsorted(positions, final_index)
        final_logits = logits[rows.to(logits.device), column.to(logits.device)]

        result: dict[str, np.ndarray] = {}
        for readout in self.readouts:
            result[readout] = torch.stack([store[readout][layer] for layer in self.layers], 1).numpy()
        if "values" in result and result["values"].shape[2] != self.shape.n_kv_heads:
            raise ConfigError(f"TransformerLens hook_v has {result['values'].shape[2]} heads where the "
                              f"model has {self.shape.n_kv_heads} key/value heads; use the hf backend")
        scores = torch.stack([store["scores"][layer] for layer in self.layers], 1)  # [batch, L, H, k_pos]
        visible = torch.stack([store["visible"][layer] for layer in self.layers], 1)  # [batch, L, k_pos]
        log_probs = torch.log_softmax(scores.masked_fill(~visible[:, :, None], float("-inf")), dim=-1)
        probs = log_probs.exp()  # exactly 0 at masked keys; NaN scores stay NaN
        terms = torch.where(probs == 0, torch.zeros_like(log_probs), probs * log_probs)
        result["attn_entropy_bits"] = (-terms.sum(-1) * LOG2E).numpy().astype(np.float32)
        result["n_visible_keys"] = visible.sum(-1).numpy().astype(np.int32)
        next_log_probs = torch.log_softmax(final_logits.float(), dim=-1).cpu()
        next_probs = next_log_probs.exp()  # 0 * log 0 = 0; NaN or +inf logits stay NaN (extraction raises)
        next_terms = torch.where(next_probs == 0, torch.zeros_like(next_probs), next_probs * next_log_probs)
        result["next_entropy_bits"] = (-next_terms.sum(-1) * LOG2E).numpy().astype(np.float32)
        if self.token_ids:
            result["token_probs"] = next_log_probs[:, self.token_ids].exp().numpy().astype(np.float32)
        return result


def _boot_bridge(loaded):
    """A TransformerBridge on a fresh eager-attention copy of the model `loaded` came from."""
    try:  # an optional dependency: the extra `geomprobe[tl]`
        from transformer_lens.model_bridge import TransformerBridge
    except ImportError as err:
        missing = "" if (err.name or "").split(".")[0] == "transformer_lens" else f" ({err})"
        raise ConfigError(f"the tl backend needs TransformerLens: pip install 'geomprobe[tl]'{missing}") from None

    if getattr(loaded, "bridge", None) is not None:  # a TransformerBridge passed in: run it, as it is
        return loaded.bridge.eval()
    if getattr(loaded, "in_memory", None):
        raise ConfigError("the tl backend boots TransformerLens on a copy loaded from disk, which an in-memory model "
                          "does not have: pass a TransformerBridge, or use the hf backend")
    from geomprobe.models.loading import load_model

    copy = load_model(loaded.source, dtype=loaded.dtype, device=loaded.device, device_map=loaded.device_map,
                      quantize=loaded.quantize, revision=loaded.revision, attn_implementation="eager")
    try:
        bridge = TransformerBridge.boot_transformers(loaded.source, hf_model=copy.model, tokenizer=copy.tokenizer,
                                                     dtype=getattr(torch, loaded.dtype))
    except (ValueError, NotImplementedError, KeyError) as err:
        raise ConfigError(f"TransformerLens cannot wrap {loaded.spec} ({loaded.family}): {err}; "
                          "use the hf backend") from None
    bridge.eval()
    return bridge
