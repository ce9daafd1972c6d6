"""Prefix reuse: run the blocks below an edit once, not once per edited pass.

An edit at layer l (a value edit of the ablation suite, a head's z or a skipped block of the
mechanisms suite) changes nothing below l, so every edited pass over the same inputs computes
blocks 0..l-1 alike. Here they run once per batch, and each edited pass runs only blocks l..L-1,
the final norm and the unembedding:

    backend = PrefixBackend(loaded, layers, readouts, token_ids)     # an HFBackend
    state = backend.prefix(input_ids, attention_mask, final_index, l)
    with edit_values(loaded.adapter, [l], editor):
        arrays = backend.run_from(state)          # the arrays HFBackend.run_batch gives under the same edit
    backend.advance(state, l2)                    # the same state moved up to a later layer l2

    shared = SharedPrefix(loaded, prompts, extraction_config, l)     # every batch of extract's batching
    shared.extract(batch_context)                 # = extract(loaded, prompts, config, batch_context=...)
    shared.extract_stacked([l], [lambda final_index: editor_a, lambda final_index: editor_b])
                                                  # [its extract under editor_a, under editor_b], one call a batch

What block l needs to run on its own is exactly what the model's own layer loop hands it: the
residual stream (the first argument) and the keyword arguments, in the form the decoder layers
receive them (transformers 5: the 4D attention mask, or None where plain causal attention is
exact; position_ids; the rotary (cos, sin) position_embeddings; cache / layer_past (None, no
cache) and use_cache; Qwen2 picks each layer's mask by its layer type, so they are kept per
block; what a layer loop passes positionally after the residual stream, as GPT-2's passes its cache,
mask and encoder states, is named from the block's forward signature). `block_inputs` records them
by running the backbone with the blocks from `start` on replaced by stubs that keep their call and
do no work (the forward stops at the last block), so a prefix costs start / L of a pass. Calling
a block directly runs its own forward and every hook registered on it or inside it
(geomprobe.hooks' edits and captures), and geomprobe's attention function finds the active
attention captures through its ContextVar, so edits, captures and the final-row attention
entropies behave as in a full pass. Every decoder layer of the supported families returns a tensor
in transformers 5 (a tuple's first element is taken otherwise).

SharedPrefix runs each batch from its state through HFBackend.run_batch (the entry point of
every extracted batch: what counts or times batches sees these too); its first batch is
also run in full (HFBackend.full_batch) and compared, and a difference beyond
CHECK_RTOL / CHECK_ATOL makes the callers fall back.

Stacked conditions (the ablation suite's true and random axes of one op and layer set): passes
that would run from the same state with edits that differ only in their parameters can run in
one call, `SharedPrefix.extract_stacked(layers, editors)`: each batch's state repeated m times
along the batch (`repeat_state`: the residual stream and every keyword tensor whose first
dimension is the batch; the position ids and rotary (cos, sin) of batch 1 that the supported
families pass stay as they are), rows j * batch..(j + 1) * batch - 1 edited by condition j
(`stacked_editor`), the arrays split back per condition. The first batch is also run condition by
condition and compared (stack_check); beyond STACK_TOLERANCE of the model's dtype (1e-5 in float32)
it raises PrefixUnavailable.
A stacked call does the same arithmetic on m times the rows, so it saves per-call costs only (on
2 CPU threads 0.84x the time per condition for 4 stacked, benchmarks/RESULTS.md), and it rounds
differently: at Pythia-410M's width in float32 the arrays were up to 3e-6 apart on 2 threads, the
values bit for bit equal on 1.

Proven (tests/extraction/test_prefix_reuse.py: equal to full passes on every tiny causal family) for the
model types in PROVEN, on the hf backend, with a model on one device in eval mode. Elsewhere
`why_not` says why and the callers run today's full passes. GEOMPROBE_PREFIX_REUSE=0 turns it off.
The prefix states are kept on the CPU (on an accelerator they would take its memory), within a
budget (GEOMPROBE_PREFIX_BUDGET_MB; default the larger of 256 MiB and a quarter of the model's
parameter bytes); over it, the callers fall back too.
"""

from __future__ import annotations

import contextlib
import inspect
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from geomprobe.attention import ATTN_IMPLEMENTATION, FinalRowCapture, capture_final_row
from geomprobe.backends.hf import HFBackend
from geomprobe.errors import ConfigError
from geomprobe.families import PREFIX_REUSE_TYPES
from geomprobe.hooks import capture_final_token

ENV = "GEOMPROBE_PREFIX_REUSE"
BUDGET_ENV = "GEOMPROBE_PREFIX_BUDGET_MB"
STACK_ENV = "GEOMPROBE_STACK_CONDITIONS"  # conditions per call of the ablation suite's stacked passes
# model types whose decoder layers run on their own exactly as inside the model (tests/extraction/test_prefix_reuse.py)
PROVEN = PREFIX_REUSE_TYPES  # geomprobe.families: the rows with prefix_reuse
CHECK_RTOL, CHECK_ATOL = 1e-5, 1e-6  # the first-batch check against a full pass
# the stacked conditions' check (a batch m times as large rounds differently): the 1e-5 asked of
# every result in float32, and a few units of the format's rounding in 16-bit formats
STACK_TOLERANCE = {"float32": 1e-5, "float64": 1e-8, "float16": 1e-2, "bfloat16": 4e-2}
LOG2E = 1.4426950408889634


class PrefixUnavailable(Exception):
    """Prefix reuse cannot be used here; str(error) says why (the caller runs full passes)."""


def enabled() -> bool:
    return os.environ.get(ENV, "1").strip().lower() not in ("0", "false", "no", "off")


def _model(loaded_or_model):
    return getattr(loaded_or_model, "model", loaded_or_model)


def final_norm(adapter) -> nn.Module | None:
    """The backbone's norm after the last block (what last_hidden_state is the output of)."""
    return adapter.final_norm()


def why_not(loaded_or_model, adapter=None, attention: bool = True) -> str | None:
    """Why prefix reuse cannot be used on this model, or None. attention: the caller needs
    geomprobe's attention function (the final-row entropies)."""
    from geomprobe.adapters import adapter_for

    model = _model(loaded_or_model)
    if not enabled():
        return f"turned off ({ENV}={os.environ.get(ENV)})"
    model_type = getattr(model.config, "model_type", None)
    if model_type not in PROVEN:
        return f"not proven for model type '{model_type}' (proven: {', '.join(PROVEN)})"
    if attention and model.config._attn_implementation != ATTN_IMPLEMENTATION:
        return f"the model runs attention '{model.config._attn_implementation}', not '{ATTN_IMPLEMENTATION}'"
    if model.training:
        return "the model is in training mode (dropout)"
    adapter = adapter or adapter_for(model)
    blocks = adapter.layers()
    if len(blocks) != adapter.shape.n_layers:
        return f"{len(blocks)} blocks for {adapter.shape.n_layers} layers"
    devices = set((getattr(model, "hf_device_map", None) or {}).values())
    if len(devices) > 1 or any(hasattr(block, "_hf_hook") for block in blocks):
        return "the model is dispatched over devices by accelerate (--device-map)"
    if final_norm(adapter) is None:
        return f"no final norm found on {type(adapter.backbone()).__name__} ({type(adapter).__name__}.final_norm)"
    return None


def budget_bytes(loaded_or_model) -> int:
    given = os.environ.get(BUDGET_ENV)
    if given:
        return int(float(given) * 2**20)
    model = _model(loaded_or_model)
    params = sum(p.numel() * p.element_size() for p in model.parameters())
    return max(256 * 2**20, params // 4)


# ---------------------------------------------------------------------------------------------
# what the blocks receive


class _Stop(Exception):
    pass


@dataclass
class BlockInputs:
    """What the model's layer loop hands blocks start..L-1: the residual stream entering block
    `start` and each block's keyword arguments (kwargs[i] for block start + i)."""

    start: int
    hidden: torch.Tensor | None
    kwargs: list[dict]

    def nbytes(self) -> int:
        return _nbytes(self.hidden) + sum(_nbytes(value) for kwargs in self.kwargs for value in kwargs.values())


def _nbytes(value) -> int:
    if isinstance(value, torch.Tensor):
        return value.numel() * value.element_size()
    if isinstance(value, (tuple, list)):
        return sum(_nbytes(v) for v in value)
    return 0


def _hidden_and_kwargs(block: nn.Module, args, kwargs) -> tuple[torch.Tensor, dict]:
    """A block call's residual stream and every other argument by name: the positional ones after
    the first (GPT-2's layer loop passes its cache, mask and encoder states positionally) are named
    from the block's forward signature."""
    kwargs = dict(kwargs)
    if not args:
        return kwargs.pop("hidden_states"), kwargs
    names = list(inspect.signature(type(block).forward).parameters.values())[2:2 + len(args) - 1]
    if len(names) < len(args) - 1 or any(p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) or p.name in kwargs
                                         for p in names):
        raise PrefixUnavailable(f"a block was called with {len(args)} positional arguments its signature does not name")
    kwargs.update((p.name, value) for p, value in zip(names, args[1:]))
    return args[0], kwargs


@contextlib.contextmanager
def _stubbed(blocks: Sequence[nn.Module], start: int, inputs: BlockInputs):
    """Blocks start.. record their call and do nothing (the last one stops the forward)."""
    saved = []

    def stub_for(index):
        def stub(*args, **kwargs):
            hidden, rest = _hidden_and_kwargs(blocks[index], args, kwargs)
            if index == start:
                inputs.hidden = hidden
            inputs.kwargs[index - start] = rest
            if index == len(blocks) - 1:
                raise _Stop
            return hidden

        return stub

    try:
        for index in range(start, len(blocks)):
            block = blocks[index]
            saved.append((block, block.__dict__.get("forward")))
            block.forward = stub_for(index)
        yield
    finally:
        for block, own in saved:
            if own is None:
                del block.forward
            else:
                block.forward = own


def block_inputs(adapter, start: int, run: Callable[[], object]) -> BlockInputs:
    """Run `run()` (a forward of the model) with blocks start..L-1 stubbed: their inputs are
    recorded and they, the final norm and anything after are not computed."""
    blocks = adapter.layers()
    if not 0 <= start < len(blocks):
        raise ValueError(f"start {start} is not a layer of this model (0-{len(blocks) - 1})")
    inputs = BlockInputs(start, None, [None] * (len(blocks) - start))
    with _stubbed(blocks, start, inputs):
        try:
            run()
        except _Stop:
            pass
        else:
            raise PrefixUnavailable("the forward pass did not reach the last block")
    if inputs.hidden is None or any(kwargs is None for kwargs in inputs.kwargs):
        raise PrefixUnavailable("the forward pass did not call every block")
    return inputs


@contextlib.contextmanager
def recording_inputs(adapter, start: int = 0):
    """While active, each forward records (observes only, everything still runs) what blocks
    start..L-1 receive; yields a list that gets one BlockInputs per forward."""
    from geomprobe.hooks import Hook, hooked

    blocks = adapter.layers()
    record: list[BlockInputs] = []

    def pre(index):
        def keep(module, args, kwargs):
            hidden, rest = _hidden_and_kwargs(module, args, kwargs)
            if index == start:
                record.append(BlockInputs(start, hidden, [None] * (len(blocks) - start)))
            record[-1].kwargs[index - start] = rest

        return keep

    with hooked([Hook(blocks[index], pre(index), pre=True, with_kwargs=True) for index in range(start, len(blocks))]):
        yield record


def run_blocks(adapter, inputs: BlockInputs, start: int | None = None, stop: int | None = None,
               hidden: torch.Tensor | None = None) -> torch.Tensor:
    """The residual stream after blocks start..stop-1 (default inputs.start..L-1), from `hidden`
    (default inputs.hidden, moved to the blocks' device)."""
    blocks = adapter.layers()
    start = inputs.start if start is None else start
    stop = len(blocks) if stop is None else stop
    device = next(blocks[start].parameters()).device
    hidden = (inputs.hidden if hidden is None else hidden).to(device)
    for index in range(start, stop):
        out = blocks[index](hidden, **inputs.kwargs[index - inputs.start])
        hidden = out[0] if isinstance(out, tuple) else out
    return hidden


def _cpu(tensor: torch.Tensor) -> torch.Tensor:
    return tensor if tensor.device.type == "cpu" else tensor.cpu()


# ---------------------------------------------------------------------------------------------
# extraction from a shared prefix


@dataclass
class PrefixState:
    """One batch's prefix below `start`: the blocks' inputs (hidden on the CPU), the final
    positions, and the per-layer readouts of the extracted layers below `start`, which no edit
    from `start` on can change (readout -> layer -> [batch, ...] float32 CPU; attention
    entropies and visible keys per layer)."""

    start: int
    inputs: BlockInputs
    final_index: torch.Tensor
    before: dict[str, dict[int, torch.Tensor]] = field(default_factory=dict)
    entropy_nats: dict[int, torch.Tensor] = field(default_factory=dict)
    n_visible: dict[int, torch.Tensor] = field(default_factory=dict)

    def nbytes(self) -> int:
        return (self.inputs.nbytes() + sum(_nbytes(t) for per in self.before.values() for t in per.values())
                + sum(_nbytes(t) for t in self.entropy_nats.values()) + sum(_nbytes(t) for t in self.n_visible.values()))


class PrefixBackend(HFBackend):
    """HFBackend's arrays (values, z, resid, hidden, attention entropies, visible keys, next-token
    entropy and token probabilities) from a prefix state: `prefix` runs blocks 0..start-1 once,
    `run_from` blocks start..L-1 under whatever edit is active. run_from(prefix(...)) equals
    HFBackend.full_batch on the same batch under the same edit (an edit at layers >= start).
    `run_batch_from` goes through run_batch, the entry point of every extracted batch, so that
    whatever counts or times batches there sees these too."""

    def __init__(self, loaded, layers, readouts, token_ids):
        super().__init__(loaded, layers, readouts, token_ids)  # checks the attention implementation
        self.hooked = tuple(dict.fromkeys("resid" if r == "hidden" else r for r in self.readouts))
        self.norm = final_norm(self.adapter)

    def run_batch_from(self, state: PrefixState, input_ids, attention_mask, final_index) -> dict[str, np.ndarray]:
        """run_batch(input_ids, attention_mask, final_index) of the batch `state` was made from, run from it."""
        self.from_prefix = lambda *batch: self.run_from(state)
        try:
            return self.run_batch(input_ids, attention_mask, final_index)
        finally:
            self.from_prefix = None

    @torch.no_grad()
    def prefix(self, input_ids, attention_mask, final_index, start: int) -> PrefixState:
        adapter = self.adapter
        input_ids, attention_mask = input_ids.to(self.device), attention_mask.to(self.device)
        at = final_index.to(self.device)
        below = [layer for layer in self.layers if layer < start]
        capture = FinalRowCapture(final_index=at, layers=frozenset(below))
        with capture_final_row(capture), capture_final_token(adapter, below, at, self.hooked) as store:
            inputs = block_inputs(adapter, start, lambda: adapter.backbone()(
                input_ids=input_ids, attention_mask=attention_mask, use_cache=False))
        inputs.hidden = _cpu(inputs.hidden)
        return PrefixState(start, inputs, final_index.cpu(), dict(store), dict(capture.entropy_nats),
                           dict(capture.n_visible))

    @torch.no_grad()
    def advance(self, state: PrefixState, start: int) -> None:
        """Move `state` up to layer `start` (>= state.start), running blocks state.start..start-1
        unedited and keeping the readouts of the extracted layers among them."""
        if start < state.start:
            raise ValueError(f"cannot move a prefix below layer {state.start} down to {start}")
        if start == state.start:
            return
        adapter, at = self.adapter, state.final_index.to(self.device)
        between = [layer for layer in self.layers if state.start <= layer < start]
        capture = FinalRowCapture(final_index=at, layers=frozenset(between))
        with capture_final_row(capture), capture_final_token(adapter, between, at, self.hooked) as store:
            hidden = run_blocks(adapter, state.inputs, stop=start)
        for readout, per_layer in store.items():
            state.before.setdefault(readout, {}).update(per_layer)
        state.entropy_nats.update(capture.entropy_nats)
        state.n_visible.update(capture.n_visible)
        state.inputs = BlockInputs(start, _cpu(hidden), state.inputs.kwargs[start - state.start:])
        state.start = start

    @torch.no_grad()
    def run_from(self, state: PrefixState) -> dict[str, np.ndarray]:
        from geomprobe.backends.hf import hidden_states_at, next_token_summary

        adapter, start, final_index = self.adapter, state.start, state.final_index.to(self.device)
        above = [layer for layer in self.layers if layer >= start]
        capture = FinalRowCapture(final_index=final_index, layers=frozenset(above))
        with capture_final_row(capture), capture_final_token(adapter, above, final_index, self.hooked) as store:
            last_hidden_state = self.norm(run_blocks(adapter, state.inputs))
        rows = torch.arange(last_hidden_state.shape[0], device=last_hidden_state.device)
        final_hidden = last_hidden_state[rows, final_index.to(rows.device)]  # [batch, d_model]

        def per_layer(name):
            return {**state.before.get(name, {}), **store.get(name, {})}

        result: dict[str, np.ndarray] = {}
        for readout in self.readouts:
            if readout == "hidden":
                result[readout] = hidden_states_at(per_layer("resid"), final_hidden, self.layers,
                                                   adapter.shape.n_layers).numpy()
            else:
                seen = per_layer(readout)
                result[readout] = torch.stack([seen[layer] for layer in self.layers], 1).numpy()
        entropy = {**state.entropy_nats, **capture.entropy_nats}
        visible = {**state.n_visible, **capture.n_visible}
        result["attn_entropy_bits"] = (torch.stack([_cpu(entropy[layer]) for layer in self.layers], 1)
                                       * LOG2E).float().cpu().numpy()
        result["n_visible_keys"] = torch.stack([_cpu(visible[layer]) for layer in self.layers],
                                               1).cpu().numpy().astype(np.int32)
        unembed = adapter.unembed()
        if unembed is not None:
            result.update(next_token_summary(unembed(final_hidden.to(unembed.weight.device)), self.token_ids))
        return result


# ---------------------------------------------------------------------------------------------
# stacked conditions: several edits of the same state in one call


def stack_env() -> int | None:
    """GEOMPROBE_STACK_CONDITIONS=N as a number (N >= 1), None when unset; ConfigError when it is not one."""
    given = os.environ.get(STACK_ENV, "").strip()
    if not given:
        return None
    try:
        number = int(given)
    except ValueError:
        number = 0
    if number < 1:
        raise ConfigError(f"{STACK_ENV}={given!r} is not a whole number >= 1: unset it or give the conditions "
                          f"per call, e.g. {STACK_ENV}=4")
    return number


def repeat_rows(value, rows: int, times: int):
    """`value` with every tensor of at least 2 dimensions whose first is the batch (`rows`) repeated
    `times` along it (row j * rows + i is row i), through tuples, lists and dicts. Anything else is
    kept as it is: None and flags, 1-D tensors (cache positions), and tensors of batch 1 that the
    rows share (GPT-NeoX's, the Llama-likes', Phi's and GPT-2's position_ids [1, T] and rotary (cos, sin)
    [1, T, d]); with rows = 1 those are repeated too, which changes nothing they compute. What the
    supported families hand their blocks: hidden [batch, T, d_model], the 4D attention mask
    [batch, 1, T, T] (or None), position_ids and position_embeddings of batch 1, no cache."""
    if isinstance(value, torch.Tensor):
        if value.ndim >= 2 and value.shape[0] == rows:
            return value.repeat(times, *([1] * (value.ndim - 1)))
        return value
    if isinstance(value, tuple):
        return tuple(repeat_rows(v, rows, times) for v in value)
    if isinstance(value, list):
        return [repeat_rows(v, rows, times) for v in value]
    if isinstance(value, dict):
        return {k: repeat_rows(v, rows, times) for k, v in value.items()}
    return value


def repeat_state(state: PrefixState, times: int) -> PrefixState:
    """The state of `times` copies of its batch stacked along the batch (row j * batch + i is row i):
    the residual stream and the blocks' keyword arguments (repeat_rows), the final positions, and
    the readouts, entropies and visible keys of the layers below (so that run_from's arrays have
    times x batch rows). times = 1 returns the state itself."""
    if times == 1:
        return state
    rows = int(state.final_index.shape[0])

    def each(per_layer):
        return {key: tensor.repeat(times, *([1] * (tensor.ndim - 1))) for key, tensor in per_layer.items()}

    inputs = BlockInputs(state.inputs.start, repeat_rows(state.inputs.hidden, rows, times),
                         [repeat_rows(kwargs, rows, times) for kwargs in state.inputs.kwargs])
    return PrefixState(state.start, inputs, state.final_index.repeat(times),
                       {readout: each(per_layer) for readout, per_layer in state.before.items()},
                       each(state.entropy_nats), each(state.n_visible))


def stacked_editor(editors: Sequence[Callable], rows: int) -> Callable:
    """One value edit fn(layer, values) for len(editors) conditions stacked along the batch:
    values [m x rows, pos, n_kv_heads, d_head], rows j * rows..(j + 1) * rows - 1 edited by
    editors[j] (each called on its own chunk, as in an unstacked pass of `rows` rows)."""
    m = len(editors)

    def edit(layer: int, values: torch.Tensor) -> torch.Tensor:
        if values.shape[0] != m * rows:
            raise ValueError(f"stacked values have {values.shape[0]} rows, expected {m} conditions x {rows}")
        return torch.cat([fn(layer, chunk) for fn, chunk in zip(editors, values.split(rows))])

    return edit


def max_difference(a: dict[str, np.ndarray], b: dict[str, np.ndarray], rtol: float = CHECK_RTOL,
                   atol: float = CHECK_ATOL) -> tuple[float, bool]:
    """(largest absolute difference over the arrays of two run_batch results, whether every array
    is within rtol / atol); different keys or shapes are never close."""
    if set(a) != set(b):
        return float("inf"), False
    largest, close = 0.0, True
    for name in a:
        x, y = np.asarray(a[name]), np.asarray(b[name])
        if x.shape != y.shape:
            return float("inf"), False
        if x.size:
            diff = np.abs(x.astype(np.float64) - y.astype(np.float64))
            largest = max(largest, float(np.nanmax(diff)) if np.isfinite(diff).any() else float("inf"))
            close &= bool(np.allclose(x, y, rtol=rtol, atol=atol, equal_nan=True))
    return largest, close


class SharedPrefix:
    """extract(loaded, prompts, config, batch_context=...) for passes whose edits all start at or
    above layer `start`: the prompts are batched exactly as extract batches them, every batch's
    prefix is computed once here, and `extract(batch_context)` runs only blocks start..L-1 per
    batch; `advance(later)` moves every state up to a later start (the blocks between run once,
    unedited), for the next group of passes. Raises PrefixUnavailable when the states exceed the
    budget, or when the first batch's unedited run from the prefix differs from a full pass of
    it (`check` keeps the difference; after `advance`, the same full pass is the reference)."""

    def __init__(self, loaded, prompts, config, start: int, budget: int | None = None, verify: bool = True):
        from geomprobe.extraction import _Encoded, _pad_id, pad_batch, resolve_token_ids

        why = why_not(loaded)
        if why:
            raise PrefixUnavailable(why)
        if config.backend != "hf":
            raise PrefixUnavailable(f"backend '{config.backend}' (prefix reuse runs on the hf backend)")
        adapter = loaded.adapter
        self.loaded, self.config, self.start = loaded, config, start
        self.prompts = list(prompts)
        self.layers = (list(range(adapter.shape.n_layers)) if config.layers is None
                       else [adapter.check_layer(layer) for layer in config.layers])
        token_ids = resolve_token_ids(loaded.tokenizer, config.tokens)
        self.token_ids = token_ids
        encoded = _Encoded(loaded.tokenizer, self.prompts, config.max_tokens)
        lengths = self.lengths = encoded.lengths
        order = np.argsort(-lengths, kind="stable")  # longest first, as extract
        batches = [order[i: i + config.batch_size].tolist() for i in range(0, len(order), config.batch_size)]
        budget = budget_bytes(loaded) if budget is None else budget
        itemsize = torch.finfo(loaded.model.get_input_embeddings().weight.dtype).bits // 8
        estimate = sum(len(b) * int(lengths[b].max()) for b in batches) * adapter.shape.d_model * itemsize
        if estimate > budget:
            raise PrefixUnavailable(f"the prefix states would take about {estimate / 2**20:.0f} MiB, over the budget "
                                    f"of {budget / 2**20:.0f} MiB ({BUDGET_ENV})")
        self.backend = PrefixBackend(loaded, self.layers, config.readouts, token_ids)
        pad_id = _pad_id(loaded.tokenizer)
        self.batches: list[tuple[list[int], PrefixState, tuple]] = []  # prompts, state, (input_ids, attention_mask)
        self.nbytes = 0
        self.check: dict = {}
        self.stack_check: dict = {}  # the last extract_stacked's first-batch check
        self.reference: dict[str, np.ndarray] | None = None  # the first batch's full pass, unedited
        self.reference_start: int | None = None  # the start it was first compared at
        self.budget = budget
        for number, batch in enumerate(batches):
            input_ids, attention_mask, final_index = pad_batch([encoded[i] for i in batch], pad_id)
            state = self.backend.prefix(input_ids, attention_mask, final_index, start)
            self.nbytes += state.nbytes()
            if self.nbytes > budget:
                raise PrefixUnavailable(f"the prefix states take more than the budget of {budget / 2**20:.0f} MiB "
                                        f"({BUDGET_ENV})")
            self.batches.append((batch, state, (input_ids, attention_mask)))
            if verify and number == 0:  # a check, not a pass: full_batch, not run_batch
                self.reference = self.backend.full_batch(input_ids, attention_mask, final_index)
                self.reference_start = start
                self._verify("a full pass of it")

    def _verify(self, against: str) -> None:
        largest, close = max_difference(self.backend.run_from(self.batches[0][1]), self.reference)
        self.check = {"batch_prompts": len(self.batches[0][0]), "max_abs_diff": largest, "against": against,
                      "rtol": CHECK_RTOL, "atol": CHECK_ATOL}
        if not close:
            raise PrefixUnavailable(f"the unedited run from layer {self.start} differs from a full pass by up to "
                                    f"{largest:.3g} on the first batch")

    def advance(self, start: int) -> None:
        """Every batch's state moved up to layer `start` (blocks self.start..start-1 run unedited
        once), checked like the first start against the first batch's full pass."""
        for _, state, _ in self.batches:
            self.backend.advance(state, start)
        self.start = start
        self.nbytes = sum(state.nbytes() for _, state, _ in self.batches)
        if self.nbytes > self.budget:
            raise PrefixUnavailable(f"the prefix states take more than the budget of {self.budget / 2**20:.0f} MiB "
                                    f"({BUDGET_ENV})")
        if self.reference is not None:
            self._verify(f"the full pass of it made for the check at layer {self.reference_start}")

    def extract(self, batch_context: Callable | None = None):
        """The Extraction that extract(loaded, prompts, config, progress=False, batch_context=...)
        returns (no out_dir), its edited layers all >= start."""
        from geomprobe.extraction import _check_finite, _MemorySink

        sink = _MemorySink(len(self.prompts))
        for batch, state, (input_ids, attention_mask) in self.batches:
            with batch_context(state.final_index) if batch_context is not None else contextlib.nullcontext():
                result = self.backend.run_batch_from(state, input_ids, attention_mask, state.final_index)
            _check_finite(result, [self.prompts[i].id for i in batch], self.loaded, self.layers, None, index=batch)
            sink.add(batch, result)
        return self._extraction(sink)

    def extract_stacked(self, layers: Sequence[int], editors: Sequence[Callable], verify: bool = True) -> list:
        """[extract(batch_context) for each condition], the conditions run together: editors[j](final_index)
        is condition j's value edit of a batch (fn(layer, values) for geomprobe.hooks.edit_values at
        `layers`; final_index [batch] is the batch's own, so a final-position edit sees its rows as in
        an unstacked pass). Each batch's state is repeated m = len(editors) times along the batch
        (repeat_state), one call runs the m x batch rows with rows j * batch..(j + 1) * batch - 1
        edited by editors[j] (stacked_editor), and the arrays are split back per condition.
        verify: the first batch is also run from its state once per condition, unstacked, and compared
        (stack_check keeps the difference); beyond STACK_TOLERANCE raises PrefixUnavailable."""
        from geomprobe.extraction import _check_finite, _MemorySink
        from geomprobe.hooks import edit_values

        m = len(editors)
        if m < 1:
            raise ValueError("extract_stacked needs at least one condition")
        if verify:
            self.stack_check = {}
        sinks = [_MemorySink(len(self.prompts)) for _ in range(m)]
        for number, (batch, state, (input_ids, attention_mask)) in enumerate(self.batches):
            rows = len(batch)
            fns = [make(state.final_index) for make in editors]
            stacked = repeat_state(state, m)
            with edit_values(self.loaded.adapter, layers, stacked_editor(fns, rows)):
                result = self.backend.run_batch_from(stacked, input_ids.repeat(m, 1), attention_mask.repeat(m, 1),
                                                     stacked.final_index)
            parts = [{name: array[j * rows: (j + 1) * rows] for name, array in result.items()} for j in range(m)]
            if verify and number == 0:
                self._verify_stacked(layers, state, fns, parts)
            for sink, part in zip(sinks, parts):
                _check_finite(part, [self.prompts[i].id for i in batch], self.loaded, self.layers, None, index=batch)
                sink.add(batch, part)
        return [self._extraction(sink) for sink in sinks]

    def _verify_stacked(self, layers, state: PrefixState, fns, parts) -> None:
        from geomprobe.hooks import edit_values

        largest, close = 0.0, True
        tolerance = STACK_TOLERANCE.get(str(self.loaded.dtype).removeprefix("torch."), 1e-5)
        for fn, part in zip(fns, parts):  # a check, not a pass: run_from, not run_batch
            with edit_values(self.loaded.adapter, layers, fn):
                alone = self.backend.run_from(state)
            difference, same = max_difference(part, alone, rtol=tolerance, atol=tolerance)
            largest, close = max(largest, difference), close and same
        self.stack_check = {"batch_prompts": len(state.final_index), "conditions": len(fns), "max_abs_diff": largest,
                            "against": "each condition run alone from the same state", "rtol": tolerance,
                            "atol": tolerance}
        if not close:
            raise PrefixUnavailable(f"{len(fns)} conditions run stacked differ from their runs one by one by up to "
                                    f"{largest:.3g} on the first batch")

    def _extraction(self, sink):
        from geomprobe.extraction import Extraction

        arrays = sink.finish()
        arrays["n_tokens"] = self.lengths.astype(np.int32)
        meta = {"n_prompts": len(self.prompts), "layers": self.layers, "readouts": list(self.config.readouts),
                "tokens": self.config.tokens, "token_ids": self.token_ids, "backend": "hf",
                "prefix_reuse": {"start": self.start}}
        return Extraction([p.id for p in self.prompts], self.layers, arrays, self.token_ids, meta)
