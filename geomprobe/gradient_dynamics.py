"""Gradient dynamics of attention (paper II): the closed-form gradients of one attention layer,
checked against autograd on a real model, and paper II's EM experiment on a single head.

Paper II writes one head as z_i = sum_j alpha_ij v_j with alpha_i = softmax_j(s_ij), s_ij the
scaled and masked query-key logits. With u_i = dL/dz_i, the upstream gradient at the head's output
(before the output projection), and b_ij = u_i . v_j:

    dL/ds_ij = alpha_ij (b_ij - sum_k alpha_ik b_ik)    (E-step: responsibility times advantage)
    dL/dv_j  = sum_i alpha_ij u_i                        (M-step: values pulled by their responsibilities)

Under grouped-query attention a kv head's v_j is read by every query head of its group, so dL/dv_j
sums the right-hand side over those heads.

On a Hugging Face model (GPT-NeoX, Llama-like; the layer is found through its adapter):

    grads = attention_gradients(loaded, layer=1, input_ids=ids)   # next-token cross-entropy
    grads.relative_errors()          # {'scores': ~1e-16, 'values': ~1e-16} on a float64 model
    with capture_attention_gradients(model, layer=1) as capture:   # any loss of your own
        my_loss(model(ids, use_cache=False).logits).backward()
    grads = capture.result()

While a capture is active the model runs geomprobe's one attention function
(geomprobe.attention, attn_implementation "geomprobe") with the GradientCapture among its active
captures: every layer then computes `gradient_attention`, eager attention written out so that the
captured layer keeps its scores, probabilities, values and output in the autograd graph with
`retain_grad`. The previous attention implementation is restored on exit, even on error.

The EM experiment (`em_experiment`, `EMConfig`): a sticky Markov chain over 8 symbols, noisy
Gaussian inputs, one causal attention head trained full-batch by plain SGD or by an "EM-like"
schedule with a 10x learning rate on W_V; paper II reports the EM-like run reaching SGD's
1000-step loss in about 430 steps. `analyses/gradient_dynamics_em.py` runs it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import numpy as np
import torch
from torch import nn
from transformers import AttentionInterface
from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

from geomprobe import attention
from geomprobe.errors import ConfigError

# An earlier name of geomprobe's attention function, still registered: the gradient capture now
# runs through the one "geomprobe" implementation.
ATTN_IMPLEMENTATION = "geomprobe_gradients"

# ---------------------------------------------------------------------------------------------
# Closed forms (numpy, no model)
# ---------------------------------------------------------------------------------------------


def _values_per_query_head(values: np.ndarray, n_heads: int) -> np.ndarray:
    """[batch, n_kv_heads, kv_len, d] -> [batch, n_heads, kv_len, d]; query head h reads kv head
    h // (n_heads / n_kv_heads), as transformers' repeat_kv lays them out."""
    groups = n_heads // values.shape[1]
    return np.repeat(values, groups, axis=1) if groups > 1 else values


def score_gradient(probs: np.ndarray, upstream: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Paper II's dL/ds_ij = alpha_ij (b_ij - sum_k alpha_ik b_ik), b_ij = u_i . v_j.

    probs alpha: [batch, n_heads, q_len, kv_len]; upstream u: [batch, n_heads, q_len, d_head];
    values v: [batch, n_kv_heads, kv_len, d_head]. Returns [batch, n_heads, q_len, kv_len].
    """
    b = np.einsum("bhid,bhjd->bhij", upstream, _values_per_query_head(values, probs.shape[1]))
    return probs * (b - (probs * b).sum(-1, keepdims=True))


def value_gradient(probs: np.ndarray, upstream: np.ndarray, n_kv_heads: int) -> np.ndarray:
    """Paper II's dL/dv_j = sum_i alpha_ij u_i, summed over the query heads sharing a kv head.

    probs: [batch, n_heads, q_len, kv_len]; upstream: [batch, n_heads, q_len, d_head].
    Returns [batch, n_kv_heads, kv_len, d_head].
    """
    per_head = np.einsum("bhij,bhid->bhjd", probs, upstream)
    batch, n_heads, kv_len, d_head = per_head.shape
    return per_head.reshape(batch, n_kv_heads, n_heads // n_kv_heads, kv_len, d_head).sum(2)


def relative_error(reference: np.ndarray, candidate: np.ndarray) -> float:
    """max |reference - candidate| / max |reference| (0 when both are all zero)."""
    scale = float(np.abs(reference).max())
    diff = float(np.abs(reference - candidate).max())
    return diff / scale if scale > 0 else diff


# ---------------------------------------------------------------------------------------------
# Capture on a Hugging Face model
# ---------------------------------------------------------------------------------------------


@dataclass
class AttentionGradients:
    """One attention layer's forward quantities and their autograd gradients, float64 numpy.

    probs alpha: [batch, n_heads, q_len, kv_len] (0 on masked keys and on padding queries that
    see no key); scores s: the same shape, pre-softmax logits after scaling and masking (-inf on
    masked keys); values v: [batch, n_kv_heads, kv_len, d_head]; upstream u = dL/dz, z the head
    outputs before the output projection: [batch, n_heads, q_len, d_head]; grad_scores = dL/ds
    (like scores); grad_values = dL/dv (like values).
    """

    layer: int
    probs: np.ndarray
    scores: np.ndarray
    values: np.ndarray
    upstream: np.ndarray
    grad_scores: np.ndarray
    grad_values: np.ndarray
    loss: float | None = None

    def closed_form_grad_scores(self) -> np.ndarray:
        return score_gradient(self.probs, self.upstream, self.values)

    def closed_form_grad_values(self) -> np.ndarray:
        return value_gradient(self.probs, self.upstream, self.values.shape[1])

    def relative_errors(self) -> dict[str, float]:
        """Autograd vs paper II's closed forms, as `relative_error` (max abs difference over max abs)."""
        return {"scores": relative_error(self.grad_scores, self.closed_form_grad_scores()),
                "values": relative_error(self.grad_values, self.closed_form_grad_values())}


@dataclass
class GradientCapture:
    """What `gradient_attention` keeps for the captured layer (live tensors, in the graph)."""

    layer: int
    module: nn.Module
    tensors: dict[str, torch.Tensor] = field(default_factory=dict)
    loss: float | None = None

    def record(self, layer, module, query, key, value, attention_mask, scaling, dropout=0.0):
        """geomprobe.attention's capture hook: every layer's result while the capture is active."""
        return gradient_attention(module, query, key, value, attention_mask, scaling, dropout, capture=self)

    def result(self) -> AttentionGradients:
        """Read after `loss.backward()`."""
        if not self.tensors:
            raise ConfigError(f"layer {self.layer} did not run under the capture: call the model inside "
                              "`with capture_attention_gradients(...)`")
        missing = [name for name in ("scores", "values", "output") if self.tensors[name].grad is None]
        if missing:
            raise ConfigError(f"no gradient reached layer {self.layer}'s {', '.join(missing)}: call loss.backward() "
                              "before result(), with the model's parameters requiring grad")

        def numpy64(tensor: torch.Tensor) -> np.ndarray:
            return tensor.detach().to("cpu", torch.float64).numpy()

        t = self.tensors
        return AttentionGradients(layer=self.layer, probs=numpy64(t["probs"]), scores=numpy64(t["scores"]),
                                  values=numpy64(t["values"]), upstream=numpy64(t["output"].grad),
                                  grad_scores=numpy64(t["scores"].grad), grad_values=numpy64(t["values"].grad),
                                  loss=self.loss)


def _visible_keys(module, attention_mask, q_len: int, kv_len: int, device) -> torch.Tensor:
    """Boolean [batch|1, heads|1, q_len, kv_len]: True where the query may attend to the key."""
    if attention_mask is None:  # transformers passes None only when plain causal (or full) attention is exact
        if not getattr(module, "is_causal", True):
            return torch.ones(1, 1, q_len, kv_len, dtype=torch.bool, device=device)
        rows = torch.arange(q_len, device=device)[:, None] + (kv_len - q_len)
        return (torch.arange(kv_len, device=device)[None, :] <= rows)[None, None]
    mask = attention_mask[..., :kv_len]
    if mask.dtype == torch.bool:
        return mask
    return mask > torch.finfo(mask.dtype).min / 2


def gradient_attention(module, query, key, value, attention_mask, scaling=None, dropout=0.0,
                       capture: GradientCapture | None = None, **kwargs):
    """Eager attention in transformers' AttentionInterface signature; on the layer of `capture`
    it retains the gradients of the masked scores, the values and the per-head output.

    query: [batch, n_heads, q_len, d]; key, value: [batch, n_kv_heads, kv_len, d]. Masked keys get
    -inf scores (probability exactly 0); a query that sees no key at all (left padding) gets
    all-zero probabilities instead of a NaN row. Returns ([batch, q_len, n_heads, d], probs).
    """
    capturing = capture is not None and module is capture.module
    if capturing:
        if dropout and module.training:
            raise ConfigError("attention dropout is active, so paper II's closed forms do not apply: call "
                              "model.eval() before capturing gradients")
        value = value.clone()  # this attention is the clone's only reader: its .grad is dL/dv of this layer
    groups = query.shape[1] // key.shape[1]
    keys = key.repeat_interleave(groups, dim=1) if groups > 1 else key
    values = value.repeat_interleave(groups, dim=1) if groups > 1 else value
    if scaling is None:
        scaling = query.shape[-1] ** -0.5

    q_len, kv_len = query.shape[2], key.shape[2]
    visible = _visible_keys(module, attention_mask, q_len, kv_len, query.device)
    sees_any = visible.any(-1, keepdim=True)
    scores = torch.matmul(query, keys.transpose(2, 3)) * scaling
    if attention_mask is not None and attention_mask.dtype != torch.bool:
        scores = scores + attention_mask[..., :kv_len].masked_fill(~visible, 0.0)  # additive biases, if any
    scores = scores.masked_fill(~visible, float("-inf")).masked_fill(~sees_any, 0.0)
    softmax_dtype = torch.float32 if scores.dtype in (torch.float16, torch.bfloat16) else scores.dtype
    probs = torch.softmax(scores, dim=-1, dtype=softmax_dtype).to(value.dtype) * sees_any
    output = torch.matmul(probs, values)

    if capturing:
        if not output.requires_grad:
            raise ConfigError("the model's parameters do not require grad: call model.requires_grad_(True) "
                              "and run the forward pass with gradients enabled")
        for name, tensor in (("scores", scores), ("probs", probs), ("values", value), ("output", output)):
            tensor.retain_grad()
            capture.tensors[name] = tensor
    return output.transpose(1, 2).contiguous(), probs


AttentionInterface.register(ATTN_IMPLEMENTATION, attention.geomprobe_attention)
AttentionMaskInterface.register(ATTN_IMPLEMENTATION, sdpa_mask)


def _hf_model(model):
    from geomprobe.models.loading import LoadedModel

    return model.model if isinstance(model, LoadedModel) else model


@contextlib.contextmanager
def capture_attention_gradients(model, layer: int):
    """Run `model` (a LoadedModel or a Hugging Face model) with geomprobe's attention function and
    capture layer `layer`. Yields a GradientCapture; call `.result()` after `loss.backward()`."""
    from geomprobe.adapters import adapter_for

    hf = _hf_model(model)
    adapter = adapter_for(hf)
    layer = adapter.check_layer(layer)
    capture = GradientCapture(layer=layer, module=adapter.attention(layer))
    previous = hf.config._attn_implementation
    if previous != attention.ATTN_IMPLEMENTATION:
        hf.set_attn_implementation(attention.ATTN_IMPLEMENTATION)
    try:
        if hf.config._attn_implementation != attention.ATTN_IMPLEMENTATION:
            raise ConfigError(f"{type(hf).__name__} cannot switch its attention implementation at run time, so "
                              "its attention gradients cannot be captured")
        with attention.capture_attention(capture):
            yield capture
    finally:
        if hf.config._attn_implementation != previous:
            hf.set_attn_implementation(previous)


def next_token_loss(logits: torch.Tensor, input_ids: torch.Tensor,
                    attention_mask: torch.Tensor | None = None) -> torch.Tensor:
    """Mean next-token cross-entropy (nats) over the positions whose target is a real token.

    logits: [batch, T, vocab]; input_ids, attention_mask: [batch, T].
    """
    targets = input_ids[:, 1:]
    per_token = nn.functional.cross_entropy(logits[:, :-1].flatten(0, 1).float(), targets.flatten(),
                                            reduction="none").view_as(targets)
    if attention_mask is None:
        return per_token.mean()
    weight = attention_mask[:, 1:].to(per_token.dtype)
    return (per_token * weight).sum() / weight.sum()


def attention_gradients(model, layer: int, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None,
                        loss_fn: Callable[..., torch.Tensor] | None = None) -> AttentionGradients:
    """One forward and backward pass; the captured layer's quantities and gradients.

    model: a LoadedModel or a Hugging Face causal LM, in eval mode. input_ids, attention_mask:
    [batch, T]. loss_fn(logits, input_ids, attention_mask) -> scalar; default `next_token_loss`.
    Parameter gradients the pass leaves behind are cleared again.
    """
    hf = _hf_model(model)
    device = next(hf.parameters()).device
    input_ids = input_ids.to(device)
    attention_mask = None if attention_mask is None else attention_mask.to(device)
    loss_fn = loss_fn or next_token_loss
    with capture_attention_gradients(hf, layer) as capture, torch.enable_grad():
        try:
            logits = hf(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).logits
            loss = loss_fn(logits, input_ids, attention_mask)
            loss.backward()
        finally:
            hf.zero_grad(set_to_none=True)
        capture.loss = float(loss.detach())
    return capture.result()


# ---------------------------------------------------------------------------------------------
# The EM experiment (paper II)
# ---------------------------------------------------------------------------------------------

PAPER_II_EM = {"sgd_steps": 1000, "em_steps_to_sgd_final": 430, "speedup": 2.3}


@dataclass(frozen=True)
class EMConfig:
    """Paper II's EM experiment, in the setting analyses/README.md describes ("Gradient dynamics").
    Learning rates are plain SGD step sizes; the EM-like run uses `value_lr_em` on W_V and `lr` on
    W_Q, W_K and the readout."""

    n_symbols: int = 8
    self_transition: float = 0.3
    d_input: int = 20
    d_k: int = 10
    d_v: int = 15
    seq_len: int = 2000
    init_std: float = 0.1
    lr: float = 0.01
    value_lr_em: float = 0.1
    steps: int = 1000
    seeds: tuple[int, ...] = (0, 1, 2, 3, 4)

    def __post_init__(self):
        if not 0 <= self.self_transition < 1:
            raise ConfigError(f"self_transition must be in [0, 1), got {self.self_transition}")
        if self.n_symbols < 2 or self.seq_len < 2 or self.steps < 1 or not self.seeds:
            raise ConfigError("the EM experiment needs n_symbols >= 2, seq_len >= 2, steps >= 1 and at least one seed")


def sticky_transition_matrix(n_symbols: int = 8, self_transition: float = 0.3) -> np.ndarray:
    """[n_symbols, n_symbols] row-stochastic: P[i, i] = self_transition, the rest of each row
    proportional to 1 / circular distance |i - j| (mod n_symbols, the shorter way round). The
    matrix is circulant, so its stationary distribution is uniform."""
    index = np.arange(n_symbols)
    gap = np.abs(index[:, None] - index[None, :])
    distance = np.minimum(gap, n_symbols - gap).astype(float)
    off = np.where(distance > 0, 1.0 / np.where(distance > 0, distance, 1.0), 0.0)
    transition = (1 - self_transition) * off / off.sum(1, keepdims=True)
    transition[index, index] = self_transition
    return transition


def sample_chain(transition: np.ndarray, length: int, rng: np.random.Generator) -> np.ndarray:
    """int64 [length] symbols of the chain, started from the uniform (stationary) distribution."""
    n = transition.shape[0]
    cumulative = np.cumsum(transition, axis=1)
    draws = rng.random(length)
    symbols = np.empty(length, dtype=np.int64)
    symbols[0] = min(int(draws[0] * n), n - 1)
    for t in range(1, length):
        symbols[t] = min(int(np.searchsorted(cumulative[symbols[t - 1]], draws[t], side="right")), n - 1)
    return symbols


def em_dataset(config: EMConfig, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(inputs float32 [seq_len, d_input], symbols int64 [seq_len]) for one seed: per-symbol means
    drawn once from N(0, I_d_input), a chain from `sticky_transition_matrix`, and
    inputs = mean[symbol] + N(0, I) noise."""
    rng = np.random.default_rng([seed, 0])
    means = rng.normal(size=(config.n_symbols, config.d_input))
    symbols = sample_chain(sticky_transition_matrix(config.n_symbols, config.self_transition), config.seq_len, rng)
    inputs = means[symbols] + rng.normal(size=(config.seq_len, config.d_input))
    return inputs.astype(np.float32), symbols


class SingleHeadAttention(nn.Module):
    """One causal attention head, no residual: logits_i = (sum_{j<=i} alpha_ij x_j W_V) W_O with
    alpha_i = softmax_j((x_i W_Q) . (x_j W_K) / sqrt(d_k)). No biases; all weights N(0, init_std^2).

    inputs: [T, d_input] -> logits [T, n_symbols].
    """

    def __init__(self, config: EMConfig, seed: int):
        super().__init__()
        generator = torch.Generator().manual_seed(seed)

        def weight(rows: int, cols: int) -> nn.Parameter:
            return nn.Parameter(torch.randn(rows, cols, generator=generator) * config.init_std)

        self.W_Q = weight(config.d_input, config.d_k)
        self.W_K = weight(config.d_input, config.d_k)
        self.W_V = weight(config.d_input, config.d_v)
        self.W_O = weight(config.d_v, config.n_symbols)
        self.scale = config.d_k ** -0.5

    def forward(self, inputs: torch.Tensor, causal_bias: torch.Tensor | None = None) -> torch.Tensor:
        """causal_bias: `causal_bias(T)`, passed in by a training loop that reuses it every step."""
        if causal_bias is None:
            causal_bias = self.causal_bias(inputs.shape[0], inputs.device)
        scores = (inputs @ self.W_Q) @ (inputs @ self.W_K).T * self.scale + causal_bias
        return (torch.softmax(scores, dim=-1) @ (inputs @ self.W_V)) @ self.W_O

    @staticmethod
    def causal_bias(length: int, device=None) -> torch.Tensor:
        """[T, T] additive mask: 0 where j <= i, -inf above the diagonal."""
        return torch.full((length, length), float("-inf"), device=device).triu(1)


def train_single_head(config: EMConfig, inputs: np.ndarray, symbols: np.ndarray, value_lr: float,
                      seed: int) -> np.ndarray:
    """Full-batch plain SGD on the next-symbol cross-entropy (nats) of one sequence.

    W_V steps with `value_lr`, the other weights with `config.lr`; the initialisation depends only
    on `seed`, so two schedules with the same seed start from the same weights. Returns float64
    [steps + 1]: the loss after 0, 1, ..., steps updates.
    """
    model = SingleHeadAttention(config, seed)
    x = torch.from_numpy(inputs)
    targets = torch.from_numpy(symbols[1:])
    optimizer = torch.optim.SGD([{"params": [model.W_Q, model.W_K, model.W_O], "lr": config.lr},
                                 {"params": [model.W_V], "lr": value_lr}], lr=config.lr)
    causal_bias = model.causal_bias(len(x))
    losses = np.empty(config.steps + 1)
    for step in range(config.steps + 1):
        loss = nn.functional.cross_entropy(model(x, causal_bias)[:-1], targets)
        losses[step] = float(loss.detach())
        if step == config.steps:
            break
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    return losses


def steps_to_reach(losses: np.ndarray, target: float) -> int | None:
    """The first step (number of updates) at which the loss is <= target; None if never."""
    hits = np.flatnonzero(losses <= target)
    return int(hits[0]) if hits.size else None


@dataclass
class EMSeedResult:
    seed: int
    sgd_final_loss: float
    em_final_loss: float
    em_steps_to_sgd_final: int | None  # None: the EM-like run never reached SGD's final loss
    speedup: float | None  # steps / em_steps_to_sgd_final
    sgd_losses: np.ndarray = field(repr=False)  # float64 [steps + 1]
    em_losses: np.ndarray = field(repr=False)


@dataclass
class PairedTest:
    """One paired comparison, one-sided (alternative: the EM-like run is better) with the two-sided p."""

    on: str
    wilcoxon_statistic: float
    wilcoxon_p_one_sided: float
    wilcoxon_p_two_sided: float
    t_statistic: float
    t_p_one_sided: float
    t_p_two_sided: float


def paired_test(better: np.ndarray, worse: np.ndarray, on: str) -> PairedTest:
    """Wilcoxon signed-rank (exact for small n without ties) and paired t-test of worse - better > 0."""
    from scipy import stats

    diff = np.asarray(worse, float) - np.asarray(better, float)
    if np.all(diff == 0):
        return PairedTest(on, float("nan"), 1.0, 1.0, float("nan"), 1.0, 1.0)
    w_one = stats.wilcoxon(diff, alternative="greater")
    w_two = stats.wilcoxon(diff, alternative="two-sided")
    t_one = stats.ttest_rel(worse, better, alternative="greater")
    t_two = stats.ttest_rel(worse, better, alternative="two-sided")
    return PairedTest(on, float(w_one.statistic), float(w_one.pvalue), float(w_two.pvalue),
                      float(t_one.statistic), float(t_one.pvalue), float(t_two.pvalue))


@dataclass
class EMExperimentResult:
    config: EMConfig
    seeds: list[EMSeedResult]
    steps_test: PairedTest  # SGD's steps (config.steps) vs the EM-like run's steps to the same loss
    final_loss_test: PairedTest  # the two schedules' losses at the matched final step

    @property
    def mean_em_steps(self) -> float:
        return float(np.mean([self._steps(s) for s in self.seeds]))

    @property
    def mean_speedup(self) -> float:
        """Mean over seeds of steps / EM-like steps (a run that never got there counts as 1x)."""
        return float(np.mean([self.config.steps / max(self._steps(s), 1) for s in self.seeds]))

    def _steps(self, seed: EMSeedResult) -> int:
        return self.config.steps if seed.em_steps_to_sgd_final is None else seed.em_steps_to_sgd_final

    def to_dict(self) -> dict:
        return {"config": asdict(self.config),
                "seeds": [{k: v for k, v in asdict(s).items() if not k.endswith("_losses")} for s in self.seeds],
                "mean_em_steps_to_sgd_final": self.mean_em_steps, "mean_speedup": self.mean_speedup,
                "steps_test": asdict(self.steps_test), "final_loss_test": asdict(self.final_loss_test),
                "paper_ii": PAPER_II_EM}

    def table(self) -> str:
        """Markdown: one row per seed, the mean, paper II's figure, and the paired tests."""
        n = self.config.steps
        lines = [f"| seed | SGD loss at {n} | EM-like loss at {n} | EM-like steps to SGD's {n}-step loss | speed-up |",
                 "|---:|---:|---:|---:|---:|"]
        for s in self.seeds:
            steps = f">{n}" if s.em_steps_to_sgd_final is None else str(s.em_steps_to_sgd_final)
            speed = "-" if s.speedup is None else f"{s.speedup:.2f}x"
            lines.append(f"| {s.seed} | {s.sgd_final_loss:.4f} | {s.em_final_loss:.4f} | {steps} | {speed} |")
        lines.append(f"| mean | {np.mean([s.sgd_final_loss for s in self.seeds]):.4f} | "
                     f"{np.mean([s.em_final_loss for s in self.seeds]):.4f} | {self.mean_em_steps:.0f} | "
                     f"{self.mean_speedup:.2f}x |")
        lines.append(f"| paper II | | | {PAPER_II_EM['em_steps_to_sgd_final']} of {PAPER_II_EM['sgd_steps']} | "
                     f"about {PAPER_II_EM['speedup']}x |")
        lines.append("")
        for test in (self.steps_test, self.final_loss_test):
            lines.append(f"{test.on}: Wilcoxon signed-rank W = {test.wilcoxon_statistic:g}, one-sided p = "
                         f"{test.wilcoxon_p_one_sided:.3g} (two-sided {test.wilcoxon_p_two_sided:.3g}); paired t = "
                         f"{test.t_statistic:.2f}, one-sided p = {test.t_p_one_sided:.2g} (two-sided "
                         f"{test.t_p_two_sided:.2g}); n = {len(self.seeds)} seeds.")
        return "\n".join(lines)


def em_experiment(config: EMConfig = EMConfig(),
                  progress: Callable[[EMSeedResult], None] | None = None) -> EMExperimentResult:
    """Paper II's EM experiment: per seed, one dataset and one initialisation shared by a plain-SGD
    run (lr everywhere) and an EM-like run (value_lr_em on W_V); the EM-like run's steps to SGD's
    final loss, and paired tests over seeds."""
    results = []
    for seed in config.seeds:
        inputs, symbols = em_dataset(config, seed)
        sgd = train_single_head(config, inputs, symbols, config.lr, seed)
        em = train_single_head(config, inputs, symbols, config.value_lr_em, seed)
        steps = steps_to_reach(em, sgd[-1])
        results.append(EMSeedResult(seed, float(sgd[-1]), float(em[-1]), steps,
                                    None if steps is None else config.steps / max(steps, 1), sgd, em))
        if progress is not None:
            progress(results[-1])
    em_steps = np.array([config.steps if r.em_steps_to_sgd_final is None else r.em_steps_to_sgd_final
                         for r in results], float)
    return EMExperimentResult(
        config, results,
        steps_test=paired_test(em_steps, np.full(len(results), float(config.steps)),
                               on=f"steps to SGD's {config.steps}-step loss (SGD {config.steps} vs EM-like)"),
        final_loss_test=paired_test(np.array([r.em_final_loss for r in results]),
                                    np.array([r.sgd_final_loss for r in results]),
                                    on=f"losses at the matched step {config.steps} (SGD vs EM-like)"))


__all__ = ["ATTN_IMPLEMENTATION", "AttentionGradients", "EMConfig", "EMExperimentResult", "EMSeedResult",
           "GradientCapture", "PAPER_II_EM", "PairedTest", "SingleHeadAttention", "attention_gradients",
           "capture_attention_gradients", "em_dataset", "em_experiment", "gradient_attention", "next_token_loss",
           "paired_test", "relative_error", "sample_chain", "score_gradient", "steps_to_reach",
           "sticky_transition_matrix", "train_single_head", "value_gradient"]
