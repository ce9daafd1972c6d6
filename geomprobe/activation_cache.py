"""run_with_cache: TransformerLens's one-call cache on any model geomprobe reads.

    from geomprobe import run_with_cache
    logits, cache = run_with_cache("tiny-llama", ["The cat sat on the", "Two plus two is"])
    cache["blocks.1.attn.hook_pattern"]     # float32 [2, n_heads, pos, pos] on the CPU; "blocks.1.pattern" too
    cache.keys()                            # the names cached: every point of geomprobe.hooks, by default
    logits, cache = run_with_cache(loaded, prompts, names=lambda name: name.endswith("hook_resid_post"),
                                   final_token_only=True)   # [n_prompts, d_model] per layer

The prompts are tokenized as extraction tokenizes them (geomprobe.extraction.tokens: the
tokenizer's own special tokens, max_tokens kept from the end with a BOS kept first) and run in
right-padded batches, so every prompt's tokens sit at positions 0 .. n_tokens - 1 whatever the
batch. Positions past a prompt's last token hold 0 in the cache and the logits (not what the
model computed at padding), so the cache does not depend on how the prompts were batched.

The memory is planned before anything runs (plan_cache): the cache's bytes, exactly, against the
RAM available, and each batch's activations (geomprobe.plan.activations, as `geomprobe plan`
counts them) against the device's free memory; a cache that would not fit is refused in one line
saying what to ask for instead. Hooks are geomprobe's (geomprobe.hooks), so an `edit` block around
the call edits the cached forward pass.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass

import numpy as np
import torch

from geomprobe.errors import ConfigError
from geomprobe.hooks import POINT_OF, TABLE, missing_point, parse_point, point_names, point_shape, resolve_name, watch
from geomprobe.plan.activations import _fmt_bytes, activation_per_prompt
from geomprobe.plan.constants import DTYPE_BYTES, MARGIN_FRACTION, MARGIN_MIN
from geomprobe.plan.device import host_memory_available

Names = str | Iterable[str | tuple[int, str]] | Callable[[str], bool] | None


class ActivationCache(Mapping):
    """The activations of one run_with_cache call: name -> tensor, detached, on the CPU.

    Keys are the names as asked for (a names filter: every accepted name it selected; None:
    geomprobe's name of every point the model has, in forward order). Any other spelling of a
    cached point finds it too: cache["blocks.3.attn.hook_v"] is cache["blocks.3.values"].
    Shapes are geomprobe.hooks.point_names' with batch = the prompts, in the order given, and pos
    = the longest prompt's tokens; with final_token_only the position axis is gone (pattern: its
    query axis), [n_prompts, ...]. Tensors keep the model's dtype (pattern and the *_normalized
    points: float32).

    n_tokens: int64 [n_prompts], each prompt's tokens; tokens: int64 [n_prompts, pos], their ids
    (padding after them); final_token_only: as asked."""

    def __init__(self, tensors: dict[tuple[int | None, str], torch.Tensor], keys: dict[str, tuple[int | None, str]],
                 n_layers: int, tokens: torch.Tensor, n_tokens: torch.Tensor, final_token_only: bool):
        self._tensors = tensors
        self._keys = keys
        self._n_layers = n_layers
        self.tokens = tokens
        self.n_tokens = n_tokens
        self.final_token_only = final_token_only

    def _point(self, name) -> tuple[int | None, str] | None:
        if name in self._keys:
            return self._keys[name]
        if isinstance(name, (str, tuple)):
            return resolve_name(name, self._n_layers)
        return None

    def __getitem__(self, name) -> torch.Tensor:
        point = self._point(name)
        if point is None or point not in self._tensors:
            shown = ", ".join(map(str, list(self._keys)[:3])) + (", ..." if len(self._keys) > 3 else "")
            raise KeyError(f"{name!r} is not in this cache ({len(self._keys)} names: {shown}); ask run_with_cache "
                           "for it with names=[...]")
        return self._tensors[point]

    def __contains__(self, name) -> bool:
        point = self._point(name)
        return point is not None and point in self._tensors

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)

    @property
    def nbytes(self) -> int:
        """Bytes the cached tensors hold (each point once, however many names it is cached under)."""
        return sum(t.numel() * t.element_size() for t in self._tensors.values())

    def to_numpy(self) -> dict[str, np.ndarray]:
        """{name: numpy array}, float32 for bfloat16 and float16 tensors (numpy has no bfloat16)."""
        return {name: _numpy(self[name]) for name in self._keys}

    def stack(self, point: str) -> torch.Tensor:
        """One point of every layer cached, stacked: [n_layers_cached, ...] in layer order (point in
        any spelling without its layer: "resid_post", "hook_resid_post", "attn.hook_pattern")."""
        layers = sorted(layer for layer, name in self._tensors
                        if layer is not None and resolve_name((layer, point), self._n_layers) == (layer, name))
        if not layers:
            raise KeyError(f"no layer's {point!r} is in this cache")
        return torch.stack([self._tensors[(layer, resolve_name((layer, point), self._n_layers)[1])]
                            for layer in layers])

    def __repr__(self) -> str:
        lines = [f"ActivationCache: {len(self.n_tokens)} prompts (at most {int(self.n_tokens.max())} tokens"
                 f"{', final token only' if self.final_token_only else ''}), {len(self)} names, "
                 f"{_fmt_bytes(self.nbytes)}"]
        for name in list(self._keys)[:6]:
            tensor = self[name]
            lines.append(f"  {str(name):<32} {str(tensor.dtype).removeprefix('torch.')} {list(tensor.shape)}")
        if len(self) > 6:
            lines.append(f"  ... {len(self) - 6} more (cache.keys())")
        return "\n".join(lines)


def _numpy(tensor: torch.Tensor) -> np.ndarray:
    if tensor.is_floating_point() and tensor.dtype not in (torch.float32, torch.float64):
        tensor = tensor.float()
    return tensor.numpy()


# ---------------------------------------------------------------------------------------------
# which points


def select_names(adapter, names: Names) -> dict[str, tuple[int | None, str]]:
    """The names to cache -> their points: every point the model has (None, geomprobe's names), the
    accepted names a filter selects (a function of the name, as TransformerLens's names_filter;
    geomprobe's and TransformerLens's spellings are both offered), or the names given (checked)."""
    if names is None:
        return {point.name if not point.per_block else f"blocks.{layer}.{point.name}": (layer, point.name)
                for layer in [None, *range(adapter.shape.n_layers)] for point in TABLE
                if (layer is None) != point.per_block and missing_point(adapter, point.name) is None}
    if callable(names):
        chosen = {name: resolve_name(name, adapter.shape.n_layers) for name in point_names(adapter) if names(name)}
        if not chosen:
            raise ConfigError("run_with_cache: the names filter selected no hook point; "
                              "geomprobe.hooks.point_names(adapter) lists the names it is offered")
        return chosen
    if isinstance(names, (str, tuple)):
        names = [names]
    chosen = {name: parse_point(adapter, name) for name in names}
    if not chosen:
        raise ConfigError("run_with_cache: names=[] asks for nothing; leave names out to cache every point")
    return chosen


def _ordered(adapter, chosen: dict[str, tuple[int | None, str]]) -> dict[str, tuple[int | None, str]]:
    """Points in forward order: embed, then each block's in TABLE order, then the final norm's."""
    rank = {point.name: i for i, point in enumerate(TABLE)}
    n_layers = adapter.shape.n_layers

    def key(item):
        layer, point = item[1]
        return (-1 if point == "embed" else n_layers if layer is None else layer, rank[point])

    return dict(sorted(chosen.items(), key=key))


# ---------------------------------------------------------------------------------------------
# the memory plan


@dataclass(frozen=True)
class CachePlan:
    """What a run_with_cache call needs, in bytes, and the batch it runs in.

    cache_bytes: the cached tensors and the logits, in RAM (exact). per_prompt_bytes: one prompt's
    activations on the device during its batch's forward pass (geomprobe.plan.activations'
    formula, plus the T x T pattern where one is cached whole). batch_size: prompts per forward pass.
    ram_available / device_available: what was found (None: unknown, not checked)."""

    n_prompts: int
    max_tokens: int
    cache_bytes: int
    per_prompt_bytes: int
    batch_size: int
    device: str
    ram_available: int | None
    device_available: int | None

    def describe(self) -> str:
        """The plan in one line."""
        return (f"cache {_fmt_bytes(self.cache_bytes)} in RAM for {self.n_prompts} prompts of up to {self.max_tokens} "
                f"tokens; batches of {self.batch_size} ({_fmt_bytes(self.per_prompt_bytes)} of activations a prompt "
                f"on {self.device})")


def _point_bytes(adapter, point: str, n_prompts: int, max_tokens: int, final_token_only: bool,
                 element_bytes: int) -> int:
    sizes = {"batch": n_prompts, "pos": max_tokens, "q_pos": max_tokens, "k_pos": max_tokens}
    shape = [sizes.get(dim, dim) for dim in point_shape(adapter, point)]
    if final_token_only:
        del shape[POINT_OF[point].pos_axis]
    float32 = point == "pattern" or point.endswith("_normalized")
    return int(np.prod(shape)) * (4 if float32 else element_bytes)


def _margin(need: int) -> int:
    return int(max(MARGIN_FRACTION * need, MARGIN_MIN))


def _device_free(device: str) -> int | None:
    if device.startswith("cuda"):
        free, _ = torch.cuda.mem_get_info(torch.device(device))
        return int(free)
    return None


def plan_cache(loaded, points: Iterable[tuple[int | None, str]], n_tokens: np.ndarray, final_token_only: bool,
               batch_size: int | None = None, ram_available: int | None = None,
               device_available: int | None = None) -> CachePlan:
    """The memory plan of caching `points` for prompts of n_tokens tokens (int [n_prompts]); raises
    ConfigError (one line, saying what to ask for instead) when the cache would not fit in the RAM
    available or one prompt's activations not on the device. batch_size None: the largest power of
    two up to the number of prompts that fits. ram_available / device_available: bytes, found here
    (MemAvailable, CUDA's free memory) when not given."""
    adapter = loaded.adapter
    n_prompts, max_tokens = len(n_tokens), int(np.max(n_tokens))
    element = DTYPE_BYTES.get(loaded.dtype, 4)
    points = list(dict.fromkeys(points))
    cache = sum(_point_bytes(adapter, point, n_prompts, max_tokens, final_token_only, element)
                for _, point in points)
    if adapter.unembed() is not None:
        cache += n_prompts * (1 if final_token_only else max_tokens) * adapter.config.vocab_size * element
    ram = host_memory_available() if ram_available is None else ram_available
    if ram is not None and cache + _margin(cache) > ram:
        raise ConfigError(f"run_with_cache: the cache would hold {_fmt_bytes(cache)} ({len(points)} points, "
                          f"{n_prompts} prompts of up to {max_tokens} tokens{', logits' if adapter.unembed() else ''})"
                          f" but {_fmt_bytes(ram)} of RAM is available: ask for fewer names, final_token_only=True, "
                          "fewer prompts or max_tokens")
    per_prompt = _per_prompt_bytes(loaded, points, max_tokens, final_token_only)
    device = str(loaded.device)
    free = _device_free(device) if device_available is None else device_available
    if free is None and ram is not None and not device.startswith("cuda"):
        free = ram - cache  # a CPU run: its activations and the cache share the RAM
    fits = (lambda batch: free is None or batch * per_prompt + _margin(batch * per_prompt) <= free)
    if batch_size is None:
        batch_size = 1 << max(n_prompts - 1, 0).bit_length()
        while batch_size > 1 and not fits(batch_size):
            batch_size //= 2
        batch_size = min(batch_size, n_prompts)
    if not fits(batch_size):
        raise ConfigError(f"run_with_cache: a batch of {batch_size} prompts of {max_tokens} tokens needs about "
                          f"{_fmt_bytes(batch_size * per_prompt)} of activations but {device} has "
                          f"{_fmt_bytes(free)} free: use a smaller batch_size, max_tokens or final_token_only=True")
    return CachePlan(n_prompts, max_tokens, cache, per_prompt, batch_size, device, ram, free)


def _per_prompt_bytes(loaded, points, max_tokens: int, final_token_only: bool) -> int:
    """One prompt's activations on the device: geomprobe.plan's formula for a forward pass (all
    positions' logits unless final_token_only), plus float32 scores, probabilities and mask of the
    T x T pattern where a whole pattern is cached."""
    from geomprobe.plan.architecture import architecture_from_fields

    adapter = loaded.adapter
    try:
        arch = architecture_from_fields(loaded.model.config.to_dict())
    except (ConfigError, KeyError, TypeError):
        arch = None
    kind = "cuda" if str(loaded.device).startswith("cuda") else "cpu"
    if arch is not None:
        forward, _ = activation_per_prompt(arch, max_tokens, loaded.dtype, kind, 0, 0, full_logits=not final_token_only)
    else:  # the residual stream, attention's q, k, v and z, and the T x T scores, as a rough bound
        s = adapter.shape
        forward = max_tokens * (8 * s.d_model + 4 * s.n_heads * s.d_head) * 4 + 2 * s.n_heads * max_tokens ** 2 * 4
    pattern = any(point == "pattern" for _, point in points) and not final_token_only
    return int(forward + (3 * adapter.shape.n_heads * max_tokens ** 2 * 4 if pattern else 0))


# ---------------------------------------------------------------------------------------------
# the run


def run_with_cache(model, prompts, names: Names = None, final_token_only: bool = False, *,
                   batch_size: int | None = None, max_tokens: int | None = None, tokenizer=None,
                   device: str = "auto", dtype: str = "float32") -> tuple[torch.Tensor | None, ActivationCache]:
    """Run `prompts` through `model` and return (logits, cache), TransformerLens's run_with_cache.

    model: anything geomprobe.load_model accepts (an alias such as "tiny-neox", a hub id or a
    directory, loaded with `device` and `dtype`; a LoadedModel; a transformers model with
    `tokenizer=`, a TransformerBridge or an nnsight LanguageModel, borrowed and put back as it was).
    prompts: a string or a list of strings (or geomprobe.prompts.Prompt objects).
    names: None (every hook point the model has), a list of names in any accepted spelling
    (geomprobe.hooks.point_names), or a filter function name -> bool.
    final_token_only: keep each prompt's last real token only (the pattern's last query row).
    batch_size: prompts per forward pass (default: planned, plan_cache). max_tokens: keep each
    prompt's last max_tokens tokens (a BOS kept first), as extraction does.

    logits: [n_prompts, pos, vocab] in the model's dtype on the CPU, 0 past each prompt's tokens, or
    [n_prompts, vocab] at each prompt's last token with final_token_only; None for an encoder (BERT).
    cache: an ActivationCache (see it). Raises ConfigError in one line for a name not accepted, a
    point this model lacks, or a cache that would not fit (plan_cache)."""
    from geomprobe.models.borrowed import is_model_object
    from geomprobe.models.loaded import LoadedModel
    from geomprobe.models.loading import load_model

    if isinstance(model, LoadedModel):
        return _run_with_cache(model, prompts, names, final_token_only, batch_size, max_tokens)
    if tokenizer is not None and not is_model_object(model):
        raise ConfigError("run_with_cache: tokenizer= goes with a model object; a model loaded by name brings its own")
    if is_model_object(model):
        with load_model(model, tokenizer=tokenizer) as held:
            return _run_with_cache(held, prompts, names, final_token_only, batch_size, max_tokens)
    return _run_with_cache(load_model(model, device=device, dtype=dtype), prompts, names, final_token_only,
                           batch_size, max_tokens)


def _run_with_cache(loaded, prompts, names: Names, final_token_only: bool, batch_size: int | None,
                    max_tokens: int | None):
    from geomprobe.extraction.checks import _check_lengths
    from geomprobe.extraction.tokens import _pad_id, as_prompts, pad_batch, tokenize

    adapter = loaded.adapter
    chosen = select_names(adapter, names)
    if names is None or callable(names):
        chosen = _ordered(adapter, chosen)
    prompts = as_prompts(prompts)
    if not prompts:
        raise ConfigError("run_with_cache: no prompts given")
    encoded = tokenize(loaded.tokenizer, prompts, max_tokens)
    n_tokens = np.array([len(ids) for ids in encoded], dtype=np.int64)
    _check_lengths(loaded, prompts, n_tokens)
    points = list(dict.fromkeys(chosen.values()))
    plan = plan_cache(loaded, points, n_tokens, final_token_only, batch_size)

    n_prompts, width = len(prompts), plan.max_tokens
    pad_id = _pad_id(loaded.tokenizer)
    tokens, _, _ = pad_batch(encoded, pad_id)
    out = {point: _empty(adapter, loaded, point, n_prompts, width, final_token_only) for point in points}
    unembed = adapter.unembed()
    logits = None
    order = np.argsort(-n_tokens, kind="stable")  # longest first, as extraction batches: less padding
    device = loaded.model.get_input_embeddings().weight.device
    for start in range(0, n_prompts, plan.batch_size):
        index = torch.as_tensor(order[start: start + plan.batch_size])
        input_ids, attention_mask, final_index = pad_batch([encoded[i] for i in index.tolist()], pad_id)
        real = attention_mask.bool()
        fns = {(point if point[0] is not None else point[1]): _writer(out[point], index, real, point, final_token_only)
               for point in points}
        with torch.no_grad(), watch(adapter, fns, final_index.to(device) if final_token_only else None):
            batch_logits = _forward(loaded, unembed, input_ids.to(device), attention_mask.to(device),
                                    final_index.to(device), final_token_only)
        if batch_logits is not None:
            batch_logits = batch_logits.detach().cpu()
            if logits is None:
                logits = torch.zeros((n_prompts, *(() if final_token_only else (width,)), batch_logits.shape[-1]),
                                     dtype=batch_logits.dtype)
            if final_token_only:
                logits[index] = batch_logits
            else:
                logits[index, :batch_logits.shape[1]] = batch_logits.masked_fill(~real[..., None], 0)
    keys = dict(chosen)
    return logits, ActivationCache(out, keys, adapter.shape.n_layers, tokens, torch.as_tensor(n_tokens),
                                   final_token_only)


def _empty(adapter, loaded, point_key, n_prompts: int, width: int, final_token_only: bool) -> torch.Tensor:
    """The zero CPU tensor one point's batches are written into."""
    _, point = point_key
    sizes = {"batch": n_prompts, "pos": width, "q_pos": width, "k_pos": width}
    shape = [sizes.get(dim, dim) for dim in point_shape(adapter, point)]
    if final_token_only:
        del shape[POINT_OF[point].pos_axis]
    float32 = point == "pattern" or point.endswith("_normalized")
    dtype = torch.float32 if float32 else getattr(torch, loaded.dtype, torch.float32)
    return torch.zeros(shape, dtype=dtype)


def _writer(target: torch.Tensor, index: torch.Tensor, real: torch.Tensor, point_key, final_token_only: bool):
    """The function that copies one batch's tensor of a point into its prompts' rows of `target`,
    with zeros at padding positions (both axes of a pattern)."""
    _, point = point_key
    axis = POINT_OF[point].pos_axis

    def write(tensor: torch.Tensor) -> None:
        tensor = tensor.detach().to("cpu", target.dtype)
        if final_token_only:  # [batch, ...]; a pattern row's keys past the batch's width stay 0
            region = (index, slice(None), slice(0, tensor.shape[-1])) if point == "pattern" else (index,)
            target[region] = tensor
            return
        length = tensor.shape[axis]
        keep = real[:, :length]
        shape = [keep.shape[0]] + [1] * (tensor.dim() - 1)
        shape[axis] = length
        tensor = tensor.masked_fill(~keep.view(shape), 0)
        region = [index] + [slice(None)] * (tensor.dim() - 1)
        region[axis] = slice(0, length)
        if point == "pattern":  # its keys: padding keys are already 0
            region[3] = slice(0, tensor.shape[3])
        target[tuple(region)] = tensor

    return write


def _forward(loaded, unembed, input_ids, attention_mask, final_index, final_token_only: bool):
    """The forward pass: every position's logits, only the last real token's (as the tl backend
    asks transformers for them: logits_to_keep), or, for an encoder, its hidden states (None)."""
    if unembed is None:
        loaded.adapter.backbone()(input_ids=input_ids, attention_mask=attention_mask)
        return None
    if not final_token_only:
        return loaded.model(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).logits
    positions = torch.unique(final_index)
    logits = loaded.model(input_ids=input_ids, attention_mask=attention_mask, use_cache=False,
                          logits_to_keep=positions).logits
    rows = torch.arange(input_ids.shape[0], device=logits.device)
    return logits[rows, torch.searchsorted(positions, final_index).to(logits.device)]
