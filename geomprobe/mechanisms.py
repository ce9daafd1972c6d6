"""Mechanism probes of papers I and II on a loaded model: the torch side.

    from geomprobe.mechanisms import query_rows, layer0_token_keys, mean_ablate_heads, skip_layers

    capture = query_rows(loaded.model, input_ids, attention_mask, query_index)   # [batch, n_queries]
    capture.probs[layer]    # float32 [batch, n_queries, n_heads, kv_len], the model's own attention rows
    capture.cosine[layer]   # float32 [batch, n_queries, n_heads, kv_len], cos(q_i, k_j), post-rotary

    with mean_ablate_heads(adapter, {0: [2]}, means), skip_layers(adapter, [3]):
        logits = loaded.model(input_ids=tokens).logits     # head 0.2 at its mean, layer 3 skipped

- Q-K alignment: the query and key vectors are the ones the model's attention receives (after
  rotary, where the model rotates), captured inside geomprobe's attention function
  (geomprobe.attention.QueryRowsCapture); the tests check the recomputed probabilities against
  the model's own eager attention.
- Layer-0 frame: the keys the model computes at layer 0 for single tokens, k = W_K norm(E x) + b_K
  per head (the full pre-attention norm, before rotary, which depends on the position only).
- Ablations: a head is mean-ablated by replacing its slice of z (the attention output per head,
  the input of the output projection) with its mean over a reference batch at the same position
  (real tokens only; positions the reference never reached get the mean over all positions); a
  layer is skipped by returning its input as its output (the residual stream passes through,
  attention and MLP both removed).
The statistics live in geomprobe.analysis.qk_alignment and geomprobe.analysis.mechanism_metrics.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import torch

from geomprobe.adapters import adapter_for
from geomprobe.attention import ATTN_IMPLEMENTATION, QueryRowsCapture, capture_query_rows
from geomprobe.families import auto_class
from geomprobe.hooks import Hook, edit, hooked, watch


def _model(loaded_or_model):
    return getattr(loaded_or_model, "model", loaded_or_model)


def _device(model) -> torch.device:
    return model.get_input_embeddings().weight.device


@contextlib.contextmanager
def geomprobe_attention(model):
    """Run `model` through geomprobe's attention function (needed for the row capture) and restore
    its previous attention implementation on exit."""
    previous = model.config._attn_implementation
    if previous != ATTN_IMPLEMENTATION:
        model.set_attn_implementation(ATTN_IMPLEMENTATION)
    try:
        yield model
    finally:
        if previous != ATTN_IMPLEMENTATION:
            model.set_attn_implementation(previous)


# --------------------------------------------------------------------------------------------
# Q-K alignment


@torch.no_grad()
def query_rows(loaded_or_model, input_ids, attention_mask, query_index, layers: Iterable[int] | None = None,
               keep_qk: bool = False) -> QueryRowsCapture:
    """One forward pass recording, at every layer (or `layers`), the attention rows of the query
    positions query_index (int64 [batch, n_queries]) and the cosines between those post-rotary
    queries and every key (see QueryRowsCapture for shapes). attention_mask may be None."""
    model = _model(loaded_or_model)
    adapter = adapter_for(model)
    device = _device(model)
    capture = QueryRowsCapture(query_index=torch.as_tensor(query_index, device=device),
                               layers=None if layers is None else frozenset(layers), keep_qk=keep_qk)
    mask = None if attention_mask is None else torch.as_tensor(attention_mask, device=device)
    with geomprobe_attention(model), capture_query_rows(capture):
        adapter.backbone()(input_ids=torch.as_tensor(input_ids, device=device), attention_mask=mask,
                           use_cache=False)
    return capture


def stack_rows(captures: list[tuple[QueryRowsCapture, np.ndarray]], n_layers: int) -> dict[str, np.ndarray]:
    """Flatten captured rows into the arrays of geomprobe.analysis.qk_alignment. captures: (capture,
    keep) pairs, keep bool [batch, n_queries] marking real query slots. Rows of different batches
    are padded to the longest key length (probs 0, cosine NaN, not visible).
    Returns probs, cosine [n_rows, L, H, T], visible [n_rows, T]."""
    width = max(c.visible[0].shape[-1] for c, _ in captures)
    probs, cosine, visible = [], [], []
    for capture, keep in captures:
        keep = torch.as_tensor(keep, dtype=torch.bool)
        pad = width - capture.visible[0].shape[-1]
        p = torch.stack([capture.probs[layer] for layer in range(n_layers)], 2)[keep]  # [rows, L, H, T]
        c = torch.stack([capture.cosine[layer] for layer in range(n_layers)], 2)[keep]
        v = capture.visible[0][keep]
        probs.append(torch.nn.functional.pad(p, (0, pad), value=0.0))
        cosine.append(torch.nn.functional.pad(c, (0, pad), value=float("nan")))
        visible.append(torch.nn.functional.pad(v, (0, pad), value=False))
    return {"probs": torch.cat(probs).numpy(), "cosine": torch.cat(cosine).numpy(),
            "visible": torch.cat(visible).numpy()}


def windtunnel_rows(loaded_or_model, task, batch, batch_size: int = 64) -> dict[str, np.ndarray]:
    """Q-K rows at every supervised position of a wind-tunnel TaskBatch (the answer is read there).
    Returns stack_rows' arrays plus evidence bool [n_rows, T] (or None), sequence [n_rows] and
    query_position [n_rows]."""
    from geomprobe.windtunnel.evidence import evidence_mask, query_positions_of

    model = _model(loaded_or_model)
    n_layers = adapter_for(model).shape.n_layers
    positions = query_positions_of(batch.supervised)  # [N, Q], -1 padded
    evidence = evidence_mask(task, batch.tokens, positions)
    captures, ev_rows, seq_rows, pos_rows = [], [], [], []
    for start in range(0, len(batch), batch_size):
        rows = slice(start, start + batch_size)
        tokens = torch.as_tensor(batch.tokens[rows])
        # right padding follows every supervised position, so the causal model needs no mask
        capture = query_rows(model, tokens, None, torch.as_tensor(np.maximum(positions[rows], 0)))
        keep = positions[rows] >= 0
        captures.append((capture, keep))
        if evidence is not None:
            ev_rows.append(evidence[rows][keep])
        seq_rows.append(np.nonzero(keep)[0] + start)
        pos_rows.append(positions[rows][keep])
    arrays = stack_rows(captures, n_layers)
    width = arrays["visible"].shape[1]
    arrays["evidence"] = None if evidence is None else np.pad(np.concatenate(ev_rows),
                                                              [(0, 0), (0, width - evidence.shape[-1])])
    arrays["sequence"] = np.concatenate(seq_rows)
    arrays["query_position"] = np.concatenate(pos_rows)
    return arrays


def prompt_rows(loaded, prompts, batch_size: int = 8, max_tokens: int | None = None) -> dict[str, np.ndarray]:
    """Q-K rows at each prompt's final token (right-padded batches, padding masked). Returns
    stack_rows' arrays plus sequence [n_prompts] (prompt order) and n_visible_keys int [n_prompts]."""
    from geomprobe.extraction import _pad_id, pad_batch, tokenize

    encoded = tokenize(loaded.tokenizer, prompts, max_tokens)
    pad_id = _pad_id(loaded.tokenizer)
    n_layers = loaded.adapter.shape.n_layers
    captures = []
    for start in range(0, len(encoded), batch_size):
        input_ids, attention_mask, final_index = pad_batch(encoded[start: start + batch_size], pad_id)
        capture = query_rows(loaded, input_ids, attention_mask, final_index[:, None])
        captures.append((capture, np.ones((len(final_index), 1), dtype=bool)))
    arrays = stack_rows(captures, n_layers)
    arrays["sequence"] = np.arange(len(encoded))
    arrays["n_visible_keys"] = arrays["visible"].sum(-1)
    return arrays


# --------------------------------------------------------------------------------------------
# the layer-0 hypothesis frame


@torch.no_grad()
def layer0_token_keys(loaded_or_model, token_ids) -> np.ndarray:
    """The keys layer 0 computes for single tokens, before rotary: W_K norm(E x) + b_K with the
    layer's full pre-attention norm. float32 [n_kv_heads, n_tokens, d_head]."""
    model = _model(loaded_or_model)
    adapter = adapter_for(model)
    embedding = model.get_input_embeddings()
    ids = torch.as_tensor(np.asarray(token_ids), dtype=torch.long, device=embedding.weight.device)
    hidden = embedding(ids)  # the module, so a scaled embedding (Gemma: x sqrt(d_model)) is scaled
    norm = adapter.attention_input_norm(0)
    if norm is not None:
        hidden = norm(hidden)
    weight, bias = adapter.key_weights(0)  # [G, D, d]
    keys = torch.einsum("nD,gDd->gnd", hidden.float(), weight.to(hidden.device))
    if bias is not None:
        keys = keys + bias.to(keys.device)[:, None, :]
    return keys.cpu().numpy().astype(np.float32)


def fresh_model(loaded_or_model, seed: int):
    """The same architecture freshly initialised by transformers from the model's config (seed
    `seed`), one layer deep (only layer 0 is read)."""
    import transformers

    model = _model(loaded_or_model)
    config = copy.deepcopy(model.config)
    config.num_hidden_layers = 1
    for name in ("layer_types",):  # per-layer lists must match the layer count
        if isinstance(getattr(config, name, None), list):
            setattr(config, name, getattr(config, name)[:1])
    config._attn_implementation = "eager"
    torch.manual_seed(seed)
    model_class = getattr(transformers, auto_class(adapter_for(model).family))
    return model_class.from_config(config, dtype=torch.float32)


# --------------------------------------------------------------------------------------------
# ablations


@dataclass
class HeadMeans:
    """Mean attention output z per head over a reference batch (real tokens only).
    per_position: float32 [T_ref, H, d]; counts: int [T_ref] (reference tokens at each position);
    overall: float32 [H, d] (every real token)."""

    per_position: torch.Tensor
    counts: torch.Tensor
    overall: torch.Tensor

    def at_positions(self, length: int) -> torch.Tensor:
        """[length, H, d]: the per-position mean where the reference reached, else the overall mean."""
        out = self.overall[None].expand(length, *self.overall.shape).clone()
        reach = min(length, len(self.counts))
        known = self.counts[:reach] > 0
        out[:reach][known] = self.per_position[:reach][known]
        return out


@torch.no_grad()
def head_output_means(loaded_or_model, tokens, real=None, batch_size: int = 64) -> dict[int, HeadMeans]:
    """HeadMeans of every layer over the reference tokens [N, T] (real: bool [N, T], default all)."""
    model = _model(loaded_or_model)
    adapter = adapter_for(model)
    shape = adapter.shape
    device = _device(model)
    tokens = torch.as_tensor(tokens)
    real = torch.ones_like(tokens, dtype=torch.bool) if real is None else torch.as_tensor(real, dtype=torch.bool)
    sums = {layer: torch.zeros(tokens.shape[1], shape.n_heads, shape.d_head, dtype=torch.float64)
            for layer in range(shape.n_layers)}
    counts = real.sum(0).to(torch.float64)
    mask_now: list[torch.Tensor] = []

    def accumulate(layer):
        def add(z):  # [batch, pos, n_heads, d_head]
            sums[layer] += (z.detach().double().cpu() * mask_now[0][..., None, None]).sum(0)

        return add

    with watch(adapter, {(layer, "z"): accumulate(layer) for layer in range(shape.n_layers)}):
        for start in range(0, len(tokens), batch_size):
            mask_now[:] = [real[start: start + batch_size].double()]
            model(input_ids=tokens[start: start + batch_size].to(device), use_cache=False)
    out = {}
    for layer, total in sums.items():
        per_position = total / counts.clamp(min=1)[:, None, None]
        overall = total.sum(0) / counts.sum().clamp(min=1)
        out[layer] = HeadMeans(per_position.float(), counts.long(), overall.float())
    return out


def mean_ablate_heads(adapter, heads: Mapping[int, Iterable[int]], means: Mapping[int, HeadMeans]):
    """Replace, in each layer of `heads`, the listed heads' attention outputs z [batch, pos, d_head]
    with their reference means (HeadMeans) at the same positions (an `edit` of the z hook point).
    Hooks are removed on exit."""
    chosen_heads: dict[int, set[int]] = {}
    for layer, chosen in heads.items():
        chosen = {int(h) for h in chosen}
        if chosen:
            chosen_heads.setdefault(adapter.check_layer(layer), set()).update(chosen)

    def ablate(layer, chosen):
        def to_mean(z):  # [batch, pos, n_heads, d_head]
            edited = z.clone()
            mean = means[layer].at_positions(z.shape[1]).to(device=z.device, dtype=z.dtype)
            edited[:, :, chosen] = mean[None, :, chosen]
            return edited

        return to_mean

    return edit(adapter, {(layer, "z"): ablate(layer, sorted(chosen)) for layer, chosen in chosen_heads.items()})


def skip_layers(adapter, layers: Iterable[int]):
    """Make each listed decoder block return its input: the residual stream passes through, the
    block's attention and MLP contribute nothing. Hooks are removed on exit."""

    def passthrough(module, args, kwargs, output):
        hidden = kwargs["hidden_states"] if "hidden_states" in kwargs else args[0]
        return (hidden, *output[1:]) if isinstance(output, tuple) else hidden

    blocks = adapter.layers()
    return hooked([Hook(blocks[layer], passthrough, with_kwargs=True)
                   for layer in sorted({adapter.check_layer(layer) for layer in layers})])


class TaskLogits(torch.nn.Module):
    """tokens (CPU) -> float32 logits (CPU) of an HF causal LM on any device: what
    geomprobe.windtunnel.train.evaluate scores."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.model(input_ids=tokens.to(_device(self.model)), use_cache=False).logits.float().cpu()


class ContextBlind(torch.nn.Module):
    """Equal logits everywhere: uniform over the answers once renormalised (the context-blind floor)."""

    def __init__(self, vocab_size: int):
        super().__init__()
        self.vocab_size = vocab_size

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return torch.zeros(*tokens.shape, self.vocab_size)


SCORE_KEYS = ("entropy_mae_bits", "kl_bits", "mass_on_feasible", "accuracy_determined")


class _RecordingLogits(TaskLogits):
    """TaskLogits that also keeps, for each call, its tokens and what every block receives
    (geomprobe.prefix.recording_inputs: observed, nothing changed), and the first call's logits:
    the unablated pass that the layer walk of ablation_scores starts from. Stops keeping (and
    says why) past the prefix budget."""

    def __init__(self, model, adapter, budget: int):
        super().__init__(model)
        self.adapter, self.budget = adapter, budget
        self.calls: list = []  # (tokens, BlockInputs)
        self.first_logits = None
        self.nbytes = 0
        self.why: str | None = None

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        from geomprobe.prefix import recording_inputs

        if self.why is not None:
            return super().forward(tokens)
        with recording_inputs(self.adapter) as record:
            logits = super().forward(tokens)
        if len(record) != 1:
            self.why, self.calls = f"a forward pass entered the first block {len(record)} times", []
            return logits
        inputs = record[0]
        inputs.hidden = inputs.hidden.detach().cpu()
        self.nbytes += inputs.nbytes()
        if self.nbytes > self.budget:
            from geomprobe.prefix import BUDGET_ENV

            self.why, self.calls = (f"the evaluation sequences' residual streams take more than the budget of "
                                    f"{self.budget / 2**20:.0f} MiB ({BUDGET_ENV})"), []
            return logits
        if not self.calls:
            self.first_logits = logits
        self.calls.append((tokens.clone(), inputs))
        return logits


class _LayerWalk:
    """The residual stream entering one layer for every evaluation batch, from the unablated pass
    (_RecordingLogits), advanced one unablated block at a time: an ablation at layer l (a head's
    z, a skipped block) changes nothing below l, so its pass runs only blocks l..L-1."""

    def __init__(self, model, adapter, calls):
        from geomprobe.prefix import final_norm

        self.model, self.adapter, self.calls = model, adapter, calls
        self.norm, self.unembed = final_norm(adapter), model.get_output_embeddings()
        self.layer = 0
        self.hidden = [inputs.hidden for _, inputs in calls]

    def logits(self, index: int) -> torch.Tensor:
        """Batch `index`'s logits (float32, CPU) from the stream entering self.layer, with whatever
        ablation is active."""
        from geomprobe.prefix import run_blocks

        inputs = self.calls[index][1]
        hidden = run_blocks(self.adapter, inputs, start=self.layer, hidden=self.hidden[index])
        return self.unembed(self.norm(hidden)).float().cpu()

    @torch.no_grad()
    def advance(self) -> None:
        """Through block self.layer, unablated."""
        from geomprobe.prefix import run_blocks

        for index, (_, inputs) in enumerate(self.calls):
            self.hidden[index] = run_blocks(self.adapter, inputs, start=self.layer, stop=self.layer + 1,
                                            hidden=self.hidden[index]).cpu()
        self.layer += 1


class _FromLayer(torch.nn.Module):
    """tokens -> logits like TaskLogits, from the walk's stream entering its layer; a call whose
    tokens are not the recorded batch's (another sampling) runs the full model instead."""

    def __init__(self, walk: _LayerWalk, fallback: TaskLogits):
        super().__init__()
        self.walk, self.fallback, self.n_calls, self.full_calls = walk, fallback, 0, 0

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        index, self.n_calls = self.n_calls, self.n_calls + 1
        calls = self.walk.calls
        if index >= len(calls) or not torch.equal(tokens, calls[index][0]):
            self.full_calls += 1
            return self.fallback(tokens)
        return self.walk.logits(index)


def ablation_scores(loaded_or_model, task, n_eval: int = 1024, n_reference: int = 256, seed: int = 0,
                    eval_seed: int = 12345, progress: bool = False) -> dict:
    """Held-out entropy MAE against the exact posterior (geomprobe.windtunnel.train.evaluate, the
    same sequences for every condition) of the model as it is, with each head mean-ablated, with
    all heads of a layer mean-ablated, and with each layer skipped; and of a context-blind
    predictor. Head means come from n_reference sequences drawn with `seed` (never the evaluation
    sequences, which evaluate draws with eval_seed).
    Returns {"baseline": score, "context_blind": score, "heads": [L][H] score, "all_heads": [L]
    score, "skip_layer": [L] score, "prefix_reuse": how the ablated passes ran}, each score the
    SCORE_KEYS plus delta_mae_bits.

    Prefix reuse (geomprobe.prefix): an ablation at layer l changes nothing below it, so the
    ablations run layer by layer from the unablated residual stream entering l (kept from the
    baseline pass, advanced one block per layer) through blocks l..L-1 only; the same numbers as
    full passes (checked on the first batch). Where it is not proven (geomprobe.prefix.why_not,
    GEOMPROBE_PREFIX_REUSE=0, over the budget) every ablation is a full pass, as
    out["prefix_reuse"] says."""
    from geomprobe.prefix import budget_bytes, why_not
    from geomprobe.windtunnel.train import evaluate

    model = _model(loaded_or_model)
    adapter = adapter_for(model)
    shape = adapter.shape
    module = TaskLogits(model)

    def score(context=None, on=None) -> dict:
        with context if context is not None else contextlib.nullcontext():
            result = evaluate(on if on is not None else module, task, n_eval, seed=eval_seed)
        return {key: result.get(key) for key in SCORE_KEYS}

    reference = task.sample(n_reference, np.random.default_rng([seed, 8]))
    means = head_output_means(model, reference.tokens, reference.tokens != task.pad_id)
    why = why_not(model, adapter, attention=False)
    recorder = None if why else _RecordingLogits(model, adapter, budget_bytes(model))
    baseline = score(on=recorder)
    walk, reuse = _reuse_prefix(model, adapter, recorder, why)
    del recorder
    conditions = _conditions(shape, by_layer=walk is not None)
    out = {"baseline": baseline, "heads": [[None] * shape.n_heads for _ in range(shape.n_layers)],
           "all_heads": [None] * shape.n_layers, "skip_layer": [None] * shape.n_layers}

    from geomprobe.console import ProgressReport

    full_calls = 0
    with ProgressReport(progress, "heads and layers", len(conditions), verb="mechanisms", unit="ablations") as bar:
        for kind, layer, head in conditions:
            context = _ablation(adapter, kind, layer, head, means)
            on = None
            if walk is not None:
                while walk.layer < layer:
                    walk.advance()
                on = _FromLayer(walk, module)
            result = score(context, on)
            full_calls += 0 if on is None else on.full_calls
            result["delta_mae_bits"] = result["entropy_mae_bits"] - baseline["entropy_mae_bits"]
            if kind == "heads":
                out["heads"][layer][head] = result
            else:
                out[kind][layer] = result
            bar.advance(1)
    walk = None
    if reuse["used"]:
        reuse["full_batches"] = full_calls  # evaluation batches not among the recorded ones (run in full)
        reuse["note"] = ("each ablation at layer l ran blocks l..L-1 from the unablated residual stream entering l "
                         "(checked against the full pass on the first batch)")
    out["prefix_reuse"] = reuse
    blind = evaluate(ContextBlind(len(task.vocab)), task, n_eval, seed=eval_seed)
    out["context_blind"] = {key: blind.get(key) for key in SCORE_KEYS}
    return out


def _reuse_prefix(model, adapter, recorder: _RecordingLogits | None, why: str | None) -> tuple[_LayerWalk | None, dict]:
    """The layer walk from the recorded baseline pass, if its run from layer 0 matches the full pass; and why not."""
    from geomprobe.prefix import max_difference

    walk, reuse = None, {"used": False, "why": why}
    if recorder is None:
        return walk, reuse
    if recorder.why is not None or not recorder.calls:
        reuse["why"] = recorder.why or "no evaluation batch was recorded"
        return walk, reuse
    walk = _LayerWalk(model, adapter, recorder.calls)
    with torch.no_grad():
        largest, close = max_difference({"logits": walk.logits(0).numpy()}, {"logits": recorder.first_logits.numpy()})
    reuse.update(check={"max_abs_diff": largest})
    if close:
        reuse.update(used=True, why=None)
        return walk, reuse
    reuse["why"] = f"the run from layer 0 differs from the full pass by up to {largest:.3g} on the first batch"
    return None, reuse


def _conditions(shape, by_layer: bool) -> list[tuple[str, int, int | None]]:
    """(kind, layer, head) of every ablation: each head, all heads of each layer, each layer skipped."""
    conditions = [("heads", layer, head) for layer in range(shape.n_layers) for head in range(shape.n_heads)]
    conditions += [("all_heads", layer, None) for layer in range(shape.n_layers)]
    conditions += [("skip_layer", layer, None) for layer in range(shape.n_layers)]
    if by_layer:  # layer by layer, so that one residual stream is held at a time
        conditions.sort(key=lambda condition: condition[1])
    return conditions


def _ablation(adapter, kind: str, layer: int, head: int | None, means):
    """The context manager that applies one ablation condition."""
    if kind == "heads":
        return mean_ablate_heads(adapter, {layer: [head]}, means)
    if kind == "all_heads":
        return mean_ablate_heads(adapter, {layer: range(adapter.shape.n_heads)}, means)
    return skip_layers(adapter, [layer])
