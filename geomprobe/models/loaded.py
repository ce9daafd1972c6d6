"""LoadedModel: a model ready for extraction, loaded by name (geomprobe.models.loading) or passed
in as an object (geomprobe.models.borrowed), with what the run manifest records about it."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

IN_MEMORY = "in-memory"
FULL_HASH_BYTES = 1 << 30  # weights up to 1 GiB are hashed whole, larger ones by each tensor's edges
EDGE_BYTES = 1 << 16


@dataclass
class LoadedModel:
    """A model ready for extraction, with what the run manifest records about it."""

    model: object  # transformers PreTrainedModel, in eval mode
    tokenizer: object
    spec: str  # what the user asked for
    source: str  # hub id or local path actually loaded
    revision: str | None
    commit: str | None  # resolved hub commit, when known
    family: str
    dtype: str
    device: str
    device_map: str | None
    quantize: str | None
    attn_implementation: str
    checkpoint: str | None = None  # a wind-tunnel training checkpoint (checkpoints/step-N.pt) loaded as `revision`
    # A model object the caller passed in (geomprobe.models.borrowed): what it was; the
    # TransformerLens bridge it came in, for the tl backend; what puts it back as it was
    in_memory: dict | None = field(default=None, repr=False)
    bridge: object = field(default=None, repr=False)
    _restore: object = field(default=None, repr=False)

    def release(self) -> None:
        """Put a model object passed in (load_model(model)) back as it was: its attention
        implementation and train/eval mode. Nothing to do for a model geomprobe loaded."""
        restore, self._restore = self._restore, None
        if restore is not None:
            restore()

    def memory_identity(self) -> dict:
        """What identifies a model object passed in (geomprobe.models.borrowed.in_memory_identity)."""
        return in_memory_identity(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.release()

    @property
    def adapter(self):
        """The family adapter of this model (geomprobe.adapters: where its blocks, attention and
        projections are, and its shape), chosen from config.model_type on first use."""
        from geomprobe.adapters import adapter_for

        if not hasattr(self, "_adapter"):
            self._adapter = adapter_for(self.model)
        return self._adapter

    def describe(self) -> dict:
        """What the manifest records of the model: spec, source, revision and commit, family, dtype,
        device, quantisation, attention implementation, shape (and checkpoint or in-memory identity)."""
        return {k: getattr(self, k) for k in ("spec", "source", "revision", "commit", "family", "dtype", "device",
                                              "device_map", "quantize", "attn_implementation")} | {
            "shape": dict(self.adapter.shape.__dict__)} | ({"checkpoint": self.checkpoint} if self.checkpoint else {}) | (
            {"in_memory": self.in_memory} if self.in_memory else {})


def in_memory_identity(loaded) -> dict:
    """What identifies an in-memory model: its class, origin, and SHA-256 prefixes of its config (as
    JSON, the attention implementation left out) and of its weights (every parameter and buffer:
    name, dtype, shape and bytes; past FULL_HASH_BYTES in all, each tensor's first and last
    EDGE_BYTES only, which a fine-tune still changes but a single edited weight may not)."""
    import torch

    model = loaded.model
    config = model.config.to_dict()
    for key in ("_attn_implementation", "_attn_implementation_internal", "attn_implementation", "_name_or_path"):
        config.pop(key, None)
    config_hash = hashlib.sha256(json.dumps(config, sort_keys=True, default=str).encode()).hexdigest()[:16]
    tensors = [*model.named_parameters(remove_duplicate=False), *model.named_buffers(remove_duplicate=False)]
    total = sum(t.numel() * t.element_size() for _, t in tensors)
    whole = total <= FULL_HASH_BYTES
    digest = hashlib.sha256()
    for key, tensor in tensors:
        digest.update(f"{key}\0{tensor.dtype}\0{tuple(tensor.shape)}\0".encode())
        flat = tensor.detach().reshape(-1)
        if not whole and flat.numel() * flat.element_size() > 2 * EDGE_BYTES:
            n = max(1, EDGE_BYTES // flat.element_size())
            flat = torch.cat([flat[:n], flat[-n:]])
        digest.update(flat.contiguous().cpu().view(torch.uint8).numpy().tobytes())
    info = getattr(loaded, "in_memory", {}) or {}
    return {"kind": IN_MEMORY, "class": info.get("class"), "origin": info.get("origin"), "config_sha256": config_hash,
            "weights_sha256": digest.hexdigest()[:16], "weights_hashed": "whole" if whole else "tensor edges"}
