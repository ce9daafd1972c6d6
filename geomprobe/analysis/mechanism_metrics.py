"""Statistics of the mechanism probes (papers I and II). numpy only.

- Layer-0 hypothesis frame: token-key orthogonality (METHODS.md section 3, token-key mode) of a
  task's frame tokens against nulls computed here: the same keys with their coordinates shuffled,
  and random subsets of other token keys (`frame_orthogonality`).
- Ablations: which head carries the frame, read from the measured MAE increases
  (`head_concentration`).
- Two timescales (paper II): the checkpoint at which each frame-precision curve settles
  (`settling_steps`), read from geomprobe.windtunnel.dissociation's curves.
"""

from __future__ import annotations

import math

import numpy as np

from geomprobe.analysis.key_orthogonality import analytic_gaussian, orth_statistic, token_key_orth
from geomprobe.errors import AnalysisError


def _mean_orth(keys: np.ndarray) -> float:
    """Mean over heads of orth among the token keys of [n_heads, n_tokens, d]."""
    return float(np.mean(orth_statistic(np.swapaxes(keys, -1, -2))))


def _spread(values) -> dict:
    values = np.asarray(values, dtype=np.float64)
    p5, p50, p95 = np.percentile(values, [5, 50, 95])
    return {"mean": float(values.mean()), "p05": float(p5), "p50": float(p50), "p95": float(p95),
            "n_draws": int(values.size)}


def _centre(keys: np.ndarray, centred: bool) -> np.ndarray:
    """[n_heads, n_tokens, d] minus each head's mean over the tokens (when centred)."""
    return keys - keys.mean(axis=1, keepdims=True) if centred else keys


def shuffled_orth(keys, n_draws: int = 50, seed: int = 0, centred: bool = True) -> dict:
    """Null for [n_heads, n_tokens, d] token keys: every key vector's d coordinates permuted
    independently (same entries, random direction relative to the others), then centred like the
    measured keys, then the mean orth."""
    keys = np.asarray(keys, dtype=np.float64)
    rng = np.random.default_rng(seed)
    return _spread([_mean_orth(_centre(rng.permuted(keys, axis=-1), centred)) for _ in range(n_draws)])


def random_subset_orth(pool_keys, size: int, n_draws: int = 50, seed: int = 0, centred: bool = True) -> dict:
    """Null: mean orth of `size` tokens drawn without replacement from a pool of token keys
    [n_heads, n_pool, d] (e.g. every ordinary token of the vocabulary), centred like the measured
    keys, n_draws times."""
    pool_keys = np.asarray(pool_keys, dtype=np.float64)
    if not 2 <= size <= pool_keys.shape[1]:
        raise AnalysisError(f"random subsets of {size} tokens need a pool of at least {size} (got "
                         f"{pool_keys.shape[1]}) and size >= 2")
    rng = np.random.default_rng(seed)
    draws = [_mean_orth(_centre(pool_keys[:, rng.choice(pool_keys.shape[1], size=size, replace=False)], centred))
             for _ in range(n_draws)]
    return _spread(draws)


def gaussian_orth(n_heads: int, n_tokens: int, d: int, n_draws: int = 50, seed: int = 0,
                  centred: bool = True) -> dict:
    """Null: i.i.d. standard Gaussian keys [n_heads, n_tokens, d], centred like the measured keys
    (centring n vectors on their own mean makes their cosines slightly negative on average, so
    with few tokens this differs from analytic_gaussian(d))."""
    rng = np.random.default_rng(seed)
    return _spread([_mean_orth(_centre(rng.standard_normal((n_heads, n_tokens, d)), centred))
                    for _ in range(n_draws)])


def frame_orthogonality(keys, pool_keys=None, init=(), centred: bool = True, n_draws: int = 50,
                        seed: int = 0) -> dict:
    """The layer-0 frame of one token group.

    keys: [n_heads, n_tokens, d] the group's trained keys; pool_keys: [n_heads, n_pool, d] keys of
    the tokens random subsets are drawn from (e.g. every ordinary token); init: the group's keys in
    freshly initialised copies, one array per seed.
    centred: subtract each head's mean key over the group first. A vector shared by the group's
    keys adds the same score to each of them in a query's row, so it cannot tell the hypotheses
    apart (the key bias is one such vector); it would dominate raw cosines, so the headline
    statistic removes it, and every baseline is centred the same way. `raw` keeps it.
    Returns orth (mean |cos| over distinct token pairs, averaged over heads), per head, and the
    baselines: analytic_gaussian (E|cos| of two random directions in R^d, uncentred), gaussian,
    shuffled (each key's coordinates permuted), random_tokens (pool subsets of the same size),
    init (per seed)."""
    keys = np.asarray(keys, dtype=np.float64)
    trained = token_key_orth(_centre(keys, centred))
    n_heads, n_tokens, d = keys.shape
    baselines = {"analytic_gaussian": analytic_gaussian(d),
                 "gaussian": gaussian_orth(n_heads, n_tokens, d, n_draws, seed, centred),
                 "shuffled": shuffled_orth(keys, n_draws, seed, centred)}
    if pool_keys is not None:
        pool_keys = np.asarray(pool_keys, dtype=np.float64)
        baselines["random_tokens"] = {**random_subset_orth(pool_keys, n_tokens, n_draws, seed, centred),
                                      "pool": int(pool_keys.shape[1])}
    if len(init):
        per_seed = [_mean_orth(_centre(np.asarray(k, dtype=np.float64), centred)) for k in init]
        baselines["init"] = {"mean": float(np.mean(per_seed)), "per_seed": per_seed, "n_seeds": len(per_seed)}
    return {"centred": centred, "n_tokens": n_tokens, "d_head": d, "orth": trained.mean,
            "per_head": trained.per_head, "raw": token_key_orth(keys).mean, "baselines": baselines}


def head_concentration(delta_mae_bits, share_threshold: float = 0.5, ratio_threshold: float = 2.0) -> dict:
    """Is a layer's ablation effect carried by one head? delta_mae_bits: [n_heads] increase of the
    entropy MAE when each head is mean-ablated. 'concentrated' when the largest increase is at
    least share_threshold of the summed positive increases and at least ratio_threshold times the
    second largest; otherwise 'spread' (or 'none' when no head increases the MAE)."""
    delta = np.asarray(delta_mae_bits, dtype=np.float64)
    order = np.argsort(-delta)
    top = int(order[0])
    positive = np.clip(delta, 0, None)
    total = float(positive.sum())
    second = float(delta[order[1]]) if len(delta) > 1 else 0.0
    share = float(positive[top] / total) if total > 0 else None
    ratio = float(delta[top] / second) if second > 0 else (math.inf if delta[top] > 0 else None)
    if total <= 0:
        reading = "none"
    elif share >= share_threshold and (ratio is None or ratio >= ratio_threshold):
        reading = "concentrated"
    else:
        reading = "spread"
    return {"top_head": top, "top_delta_mae_bits": float(delta[top]), "share_of_total": share,
            "ratio_to_second": None if ratio is None or math.isinf(ratio) else ratio, "reading": reading,
            "ranking": [int(h) for h in order], "share_threshold": share_threshold,
            "ratio_threshold": ratio_threshold}


def settling_step(steps, values, fraction: float = 0.1) -> int | None:
    """The first checkpoint step from which `values` stays within fraction x (its largest distance
    from the final value) of the final value. None when a value is missing."""
    values = np.asarray([np.nan if v is None else v for v in values], dtype=np.float64)
    if not np.isfinite(values).all() or len(values) == 0:
        return None
    distance = np.abs(values - values[-1])
    tolerance = fraction * distance.max()
    outside = np.flatnonzero(distance > tolerance)
    index = 0 if outside.size == 0 else int(outside[-1]) + 1
    return int(steps[min(index, len(steps) - 1)])


def settling_steps(curves: list[dict], fraction: float = 0.1) -> dict:
    """Paper II's two timescales on dissociation curves (one dict per checkpoint with step,
    attention_distance_mean, attention_distance_to_final [L], pc1, abs_rho_pc1_bayes_entropy,
    entropy_mae_bits): the settling step of each (settling_step), the entropy MAE also on a log10
    scale (it falls by orders of magnitude), and whether the attention frame settles before each
    precision curve (paper II predicts it does)."""
    steps = [int(c["step"]) for c in curves]
    series = {key: [c.get(key) for c in curves]
              for key in ("attention_distance_mean", "pc1", "abs_rho_pc1_bayes_entropy", "entropy_mae_bits")}
    series["entropy_mae_log10"] = [None if v is None or v <= 0 else math.log10(v) for v in series["entropy_mae_bits"]]
    settle = {key: settling_step(steps, values, fraction) for key, values in series.items()}
    n_layers = max((len(c.get("attention_distance_to_final") or []) for c in curves), default=0)
    per_layer = [settling_step(steps, [(c.get("attention_distance_to_final") or [None] * n_layers)[layer]
                                       for c in curves], fraction) for layer in range(n_layers)]
    attention = settle["attention_distance_mean"]
    before = {key: None if attention is None or settle[key] is None else bool(attention < settle[key])
              for key in ("pc1", "abs_rho_pc1_bayes_entropy", "entropy_mae_bits", "entropy_mae_log10")}
    return {"fraction": fraction, "steps": steps, "settling_step": settle, "attention_settling_step_per_layer":
            per_layer, "final_step": steps[-1] if steps else None, "attention_settles_before": before,
            "rule": (f"a curve has settled from the first checkpoint after which it stays within {fraction:g} x its "
                     "largest distance from its final value (attention: total-variation distance to the final "
                     "checkpoint's rows, so its final value is 0)")}
