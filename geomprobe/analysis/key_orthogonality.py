"""Key orthogonality (METHODS.md section 3). numpy/scipy only.

    ko = key_orthogonality([w_k[layer] for layer in range(n_layers)])   # each [n_kv_heads, d_model, d_head]
    ko.layer_mean, ko.fraction_below, ko.analytic_gaussian, ko.empirical_gaussian

For one key matrix W [D, d] (d columns k_1..k_d in R^D), with columns normalised to unit length:
    orth(W) = 1 / (d (d - 1)) * sum_{i != j} |k_i . k_j|
Baselines are computed, never assumed: the exact E|cos| of two random directions in R^D, the
statistic on i.i.d. Gaussian D x d matrices, and whatever the caller measured on freshly
initialised models or untrained checkpoints (`baselines`).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from geomprobe.errors import AnalysisError, NumericalError


def orth_statistic(weights):
    """Mean absolute off-diagonal cosine between the columns of `weights`.
    weights: [D, d] -> float, or a stack [..., D, d] -> array [...]. Needs d >= 2 and no zero column."""
    weights = np.asarray(weights, dtype=np.float64)
    if weights.ndim < 2:
        raise AnalysisError(f"orth_statistic expects [..., D, d], got shape {weights.shape}")
    d = weights.shape[-1]
    if d < 2:
        raise AnalysisError(f"orth_statistic needs at least 2 columns (vectors), got {d}")
    if not np.isfinite(weights).all():
        raise NumericalError("NaN in key weights: the matrix has NaN or infinite entries")
    norms = np.linalg.norm(weights, axis=-2, keepdims=True)
    if (norms == 0).any():
        raise AnalysisError("a key column (vector) is all zeros: its direction, and so its cosine, is undefined")
    unit = weights / norms
    cosines = np.abs(np.swapaxes(unit, -1, -2) @ unit)  # [..., d, d]
    off_diagonal = cosines.sum(axis=(-2, -1)) - np.trace(cosines, axis1=-2, axis2=-1)
    result = off_diagonal / (d * (d - 1))
    return float(result) if result.ndim == 0 else result


@dataclass(frozen=True)
class TokenKeyOrth:
    """Token-key mode for one layer: cosines among the projected keys of a sample of tokens."""

    n_heads: int
    n_tokens: int
    d_head: int
    per_head: list
    mean: float
    p10: float
    p50: float
    p90: float
    analytic_gaussian: float  # E|cos| of random directions in R^d_head

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def token_key_orth(embeddings_projected) -> TokenKeyOrth:
    """Token-key mode (the papers' code): embeddings_projected [n_heads, n_tokens, d_head] holds the
    keys E W_K of a sample of tokens; per head, the mean absolute off-diagonal cosine among its
    token keys (vectors in R^d_head, hence the analytic baseline at d_head)."""
    keys = np.asarray(embeddings_projected, dtype=np.float64)
    if keys.ndim != 3:
        raise AnalysisError(f"token_key_orth expects [n_heads, n_tokens, d_head], got shape {keys.shape}")
    per_head = np.atleast_1d(orth_statistic(np.swapaxes(keys, -1, -2)))
    p10, p50, p90 = np.percentile(per_head, [10, 50, 90])
    return TokenKeyOrth(n_heads=int(keys.shape[0]), n_tokens=int(keys.shape[1]), d_head=int(keys.shape[2]),
                        per_head=[float(v) for v in per_head], mean=float(per_head.mean()),
                        p10=float(p10), p50=float(p50), p90=float(p90),
                        analytic_gaussian=analytic_gaussian(int(keys.shape[2])))


def fold_ln(weights, ln_weight):
    """Multiply the rows of W_K [..., D, d] by the scale [D] of the norm that precedes attention,
    as TransformerLens does when it folds LayerNorm/RMSNorm weights into the next linear map
    (diag(gamma) W_K; the norm's bias only shifts keys and is not part of W_K)."""
    weights = np.asarray(weights, dtype=np.float64)
    ln_weight = np.asarray(ln_weight, dtype=np.float64).reshape(-1)
    if ln_weight.shape[0] != weights.shape[-2]:
        raise AnalysisError(f"norm scale has {ln_weight.shape[0]} entries but W_K has {weights.shape[-2]} rows (d_model)")
    return weights * ln_weight[:, None]


def analytic_gaussian(D: int) -> float:
    """Exact E|cos| between two independent uniformly random directions in R^D:
    Gamma(D/2) / (sqrt(pi) Gamma((D+1)/2)), about sqrt(2 / (pi D)) for large D (0.0249 at D=1024)."""
    if D < 2:
        raise AnalysisError(f"analytic_gaussian needs D >= 2, got {D}")
    from scipy.special import gammaln

    return float(math.exp(gammaln(D / 2) - gammaln((D + 1) / 2)) / math.sqrt(math.pi))


def empirical_gaussian(D: int, d: int, n_heads: int = 1, n_draws: int = 4, seed: int = 0) -> dict:
    """orth on i.i.d. Gaussian [D, d] matrices: n_draws simulated layers of n_heads matrices each.
    Returns the mean and 10/50/90th percentiles over all simulated heads, and the 10/90th
    percentiles of the per-layer mean (comparable to a measured layer's mean over heads)."""
    rng = np.random.default_rng(seed)
    per_draw = np.stack([orth_statistic(rng.standard_normal((n_heads, D, d))) for _ in range(n_draws)])
    p10, p50, p90 = np.percentile(per_draw, [10, 50, 90])
    layer_means = per_draw.mean(axis=1)
    return {"D": int(D), "d": int(d), "n_heads": int(n_heads), "n_draws": int(n_draws), "seed": int(seed),
            "mean": float(per_draw.mean()), "p10": float(p10), "p50": float(p50), "p90": float(p90),
            "layer_mean_p10": float(np.percentile(layer_means, 10)),
            "layer_mean_p90": float(np.percentile(layer_means, 90))}


def _is_weight_list(values) -> bool:
    return isinstance(values, (list, tuple)) and len(values) > 0 and np.ndim(values[0]) == 3


def _layer_means(weights, mode: str) -> np.ndarray:
    """Mean orth over heads for each layer of a list of [n_heads, D, d] arrays."""
    if mode == "token_keys":
        return np.array([np.mean(orth_statistic(np.swapaxes(np.asarray(w, dtype=np.float64), -1, -2)))
                         for w in weights])
    return np.array([np.mean(head_orth(np.asarray(w, dtype=np.float64))[0]) for w in weights])


def summarise_baseline(values, threshold: float = 0.20, mode: str = "columns") -> dict:
    """A baseline measured by the caller, as any of:
      per-layer means [L'] or [n_seeds, L'];
      key weights: a list over layers of [n_heads, D, d] (one model), or a list over seeds of such lists.
    Returns per-layer mean/min/max across seeds, the overall mean and the fraction of layers below
    threshold. L' need not equal the model's layer count (e.g. an initialisation measured on 2 layers)."""
    if _is_weight_list(values):
        per_layer = _layer_means(values, mode)[None, :]
    elif isinstance(values, (list, tuple)) and len(values) > 0 and _is_weight_list(values[0]):
        per_layer = np.stack([_layer_means(seed_weights, mode) for seed_weights in values])
    else:
        per_layer = np.asarray(values, dtype=np.float64)
        if per_layer.ndim == 1:
            per_layer = per_layer[None, :]
    if per_layer.ndim != 2 or per_layer.size == 0:
        raise AnalysisError(f"a baseline is per-layer means [L] or [n_seeds, L], or key weights; got shape {per_layer.shape}")
    layer_mean = per_layer.mean(axis=0)
    return {"n_seeds": int(per_layer.shape[0]), "n_layers": int(per_layer.shape[1]),
            "layer_mean": [float(v) for v in layer_mean],
            "layer_min": [float(v) for v in per_layer.min(axis=0)],
            "layer_max": [float(v) for v in per_layer.max(axis=0)],
            "mean": float(layer_mean.mean()),
            "fraction_below": float((layer_mean < threshold).mean())}


@dataclass(frozen=True)
class KeyOrthogonality:
    """METHODS.md section 3: orth statistics. Per-layer lists run over layers; per_head[l] over distinct heads.
    mode "columns": vectors are the d_head columns of W_K in R^d_model; mode "token_keys": vectors
    are projected token keys in R^d_head. vector_dim / n_vectors say which."""

    mode: str
    ln_folded: bool
    n_layers: int
    vector_dim: int  # D: dimension of the vectors whose cosines are taken
    n_vectors: int  # d: vectors per head
    threshold: float
    layer_mean: list  # [L] orth averaged over the layer's distinct heads
    layer_p10: list  # [L] percentiles over heads
    layer_p50: list
    layer_p90: list
    per_head: list  # [L][heads]
    mean: float  # mean of layer_mean
    n_layers_below: int
    fraction_below: float  # fraction of layers whose mean over heads < threshold
    analytic_gaussian: float
    empirical_gaussian: dict
    baselines: dict  # name -> summarise_baseline(...): "init" over seeds, "step0", ...
    n_zero_columns: list = dataclasses.field(default_factory=list)  # [L] key columns left out as all zeros

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def head_orth(w: np.ndarray) -> tuple[np.ndarray, int]:
    """orth of each head of w [n_heads, D, d], leaving out columns that are all zeros (a key dimension
    the model switched off: Gemma 3's key norm has channels of scale exactly 0, so the folded frame
    has zero columns whose direction is undefined), and how many were left out."""
    zero = np.linalg.norm(w, axis=-2) == 0  # [n_heads, d]
    if not zero.any():
        return np.atleast_1d(orth_statistic(w)), 0
    return np.array([orth_statistic(head[:, ~off]) for head, off in zip(w, zero)]), int(zero.sum())


def key_orthogonality(weights, threshold: float = 0.20, baselines: dict | None = None, ln_folded: bool = False,
                      mode: str = "columns", gaussian_draws: int = 4, seed: int = 0) -> KeyOrthogonality:
    """weights: list over layers of [n_distinct_heads, D, d] key matrices (GQA: the G distinct ones).
    mode="token_keys": list over layers of [n_heads, n_tokens, d_head] projected token keys instead.
    baselines: optional name -> per-layer means or key weights, one model or several seeds (see
    summarise_baseline), e.g. {"init": [weights_seed0, weights_seed1, ...], "step0": weights}.
    ln_folded: record that the caller applied fold_ln first (the statistic itself does not fold).
    A key column that is all zeros (a dimension the model switched off) is left out of its head's
    cosines and counted in n_zero_columns; a head needs two columns that are not."""
    if mode not in ("columns", "token_keys"):
        raise AnalysisError(f"mode must be 'columns' or 'token_keys', got {mode!r}")
    if len(weights) == 0:
        raise AnalysisError("key_orthogonality needs at least one layer of weights")
    per_head, shape, n_zero = [], None, []
    for layer, w in enumerate(weights):
        w = np.asarray(w, dtype=np.float64)
        if w.ndim != 3:
            raise AnalysisError(f"layer {layer}: expected [n_heads, D, d] (or [n_heads, n_tokens, d]), got {w.shape}")
        if mode == "token_keys":
            w = np.swapaxes(w, -1, -2)
        if shape is None:
            shape = w.shape[-2:]
        elif w.shape[-2:] != shape:
            raise AnalysisError(f"layer {layer}: vectors of shape {w.shape[-2:]} differ from layer 0's {shape}")
        if mode == "columns":
            orth, zero = head_orth(w)
            per_head.append(orth)
            n_zero.append(zero)
        else:
            per_head.append(np.atleast_1d(orth_statistic(w)))
            n_zero.append(0)
    D, d = (int(s) for s in shape)
    means = np.array([h.mean() for h in per_head])
    percentiles = np.array([np.percentile(h, [10, 50, 90]) for h in per_head])
    baselines = {name: summarise_baseline(values, threshold, mode) for name, values in (baselines or {}).items()}
    return KeyOrthogonality(
        mode=mode, ln_folded=ln_folded, n_layers=len(per_head), vector_dim=D, n_vectors=d, threshold=threshold,
        layer_mean=[float(v) for v in means], layer_p10=[float(v) for v in percentiles[:, 0]],
        layer_p50=[float(v) for v in percentiles[:, 1]], layer_p90=[float(v) for v in percentiles[:, 2]],
        per_head=[[float(v) for v in h] for h in per_head], mean=float(means.mean()),
        n_layers_below=int((means < threshold).sum()), fraction_below=float((means < threshold).mean()),
        analytic_gaussian=analytic_gaussian(D),
        empirical_gaussian=empirical_gaussian(D, d, n_heads=len(per_head[0]), n_draws=gaussian_draws, seed=seed),
        baselines=baselines, n_zero_columns=n_zero)
