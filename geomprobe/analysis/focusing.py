"""Attention focusing (METHODS.md section 4). numpy/scipy only.

    af = attention_focusing(extraction["attn_entropy_bits"], extraction["n_visible_keys"])
    af.focusing, af.focusing_ci95, af.hbar_bits, af.normalised["focusing"]

Hbar(l) is the mean over query heads of each head's own attention entropy at the final token,
then the mean over prompts. The inputs are per-head entropies, so distributions are never
averaged before the entropy is taken (that would add a Jensen bias).
    focusing          = 1 - Hbar(L-1) / Hbar(0)
    largest_reduction = max over l >= 1 of 1 - Hbar(l) / Hbar(0)   (can be negative)
    monotonicity      = Spearman rho(layer index, Hbar)             (-1: entropy falls at every layer)
The same statistics are reported for the normalised entropy H / log2(n_visible), where prompts
whose final token sees at most one key (normalisation undefined) are left out of that layer's mean.
CIs: 95% bootstrap over prompts, resampled jointly across layers, BCa where it works and
percentile otherwise (geomprobe.analysis.bootstrap.bca_interval, jackknife over prompts); the
per-layer Hbar intervals use the same resamples as bootstrap_mean_ci with the same seed, and so
equal its intervals. `ci_method` (and normalised["ci_method"]) names the method of each interval.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from dataclasses import dataclass

import numpy as np

from geomprobe.analysis.bootstrap import bca_interval, resample_chunks
from geomprobe.errors import AnalysisError, NumericalError


def _float_or_none(value) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


def _interval(value, boot: np.ndarray, jackknife: np.ndarray, methods: list) -> list:
    """[low, high] (BCa, or percentile where BCa is undefined); appends the method used to `methods`."""
    low, high, method = bca_interval(math.nan if value is None else value, boot, jackknife)
    methods.append(method)
    return [low, high]


def _masked_mean(values: np.ndarray, axis: int) -> np.ndarray:
    valid = np.isfinite(values)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(valid, values, 0.0).sum(axis=axis) / valid.sum(axis=axis)


def _relative_reductions(hbar: np.ndarray) -> np.ndarray:
    """1 - Hbar(l) / Hbar(0) along the last axis; NaN where Hbar(0) is 0 or undefined."""
    first = hbar[..., :1]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(first > 0, 1.0 - hbar / np.where(first > 0, first, 1.0), np.nan)


def _leave_one_out_means(values: np.ndarray) -> np.ndarray:
    """[n, L] -> [n, L]: row i is the masked mean over prompts without prompt i (the jackknife)."""
    valid = np.isfinite(values)
    total = np.where(valid, values, 0.0).sum(axis=0)
    count = valid.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (total - np.where(valid, values, 0.0)) / (count - valid)


def _largest_later(reduction: np.ndarray) -> np.ndarray:
    """max over l >= 1 of the reductions [..., L] (NaN where none is finite)."""
    later = reduction[..., 1:]
    largest = np.max(np.where(np.isfinite(later), later, -np.inf), axis=-1)
    return np.where(np.isfinite(largest), largest, np.nan)


def _profile(per_prompt: np.ndarray, n_boot: int, seed: int) -> dict:
    """Statistics of a [n_prompts, n_layers] matrix of head-mean entropies (NaN = excluded cell),
    resampling prompts as bootstrap_mean_ci does (the same indices for the same seed)."""
    hbar = _masked_mean(per_prompt, axis=0)
    n, n_layers = per_prompt.shape
    rng = np.random.default_rng(seed)
    boot_hbar = np.concatenate([_masked_mean(per_prompt[idx], axis=1)
                                for idx in resample_chunks(rng, n, n_boot, n_layers)]
                               or [np.zeros((0, n_layers))])  # [n_boot, L]
    jack_hbar = _leave_one_out_means(per_prompt)  # [n, L]
    reduction = _relative_reductions(hbar)
    boot_reduction = _relative_reductions(boot_hbar)
    jack_reduction = _relative_reductions(jack_hbar)
    later = reduction[1:]
    if np.isfinite(later).any():
        largest_layer = int(np.nanargmax(later)) + 1
        largest = float(later[largest_layer - 1])
    else:
        largest_layer, largest = None, None
    hbar_methods, focusing_method, largest_method = [], [], []
    hbar_ci95 = [_interval(hbar[layer], boot_hbar[:, layer], jack_hbar[:, layer], hbar_methods)
                 for layer in range(hbar.shape[0])]
    focusing_ci95 = _interval(reduction[-1], boot_reduction[:, -1], jack_reduction[:, -1], focusing_method)
    largest_ci95 = _interval(largest, _largest_later(boot_reduction), _largest_later(jack_reduction),
                             largest_method)
    from scipy.stats import spearmanr

    finite = np.isfinite(hbar)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # constant profile: rho undefined (NaN -> None)
        rho = spearmanr(np.arange(len(hbar))[finite], hbar[finite])[0] if finite.sum() >= 2 else math.nan
    return {
        "hbar": [_float_or_none(v) for v in hbar],
        "hbar_ci95": hbar_ci95,
        "reduction": [_float_or_none(v) for v in reduction],
        "focusing": _float_or_none(reduction[-1]),
        "focusing_ci95": focusing_ci95,
        "largest_reduction": largest,
        "largest_reduction_layer": largest_layer,
        "largest_reduction_ci95": largest_ci95,
        "monotonicity": _float_or_none(rho),
        "ci_method": {"hbar": hbar_methods, "focusing": focusing_method[0], "largest_reduction": largest_method[0]},
    }


@dataclass(frozen=True)
class AttentionFocusing:
    """METHODS.md section 4. Lists run over layers; CIs are [low, high]. `normalised` holds the same
    statistics (keys hbar, hbar_ci95, reduction, focusing, ...) for H / log2(n_visible)."""

    n_prompts: int
    n_layers: int
    n_heads: int
    hbar_bits: list  # [L] mean over prompts of the mean over heads of per-head entropy
    head_bits: list  # [L][H] mean over prompts of each query head's entropy (hbar_bits is each row's mean)
    hbar_bits_ci95: list  # [L][2]
    reduction: list  # [L] 1 - Hbar(l) / Hbar(0)
    focusing: float
    focusing_ci95: list
    largest_reduction: float | None
    largest_reduction_layer: int | None
    largest_reduction_ci95: list
    monotonicity: float | None  # Spearman rho(layer, Hbar); None if Hbar is constant
    normalised: dict
    n_excluded_normalised: int  # (prompt, layer) cells with n_visible <= 1, left out of `normalised`
    ci_method: dict  # {"hbar": [per layer], "focusing", "largest_reduction"}: "BCa" | "percentile" | "none"
    n_boot: int
    seed: int

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def attention_focusing(attn_entropy_bits, n_visible_keys, n_boot: int = 1000, seed: int = 0) -> AttentionFocusing:
    """attn_entropy_bits: [n_prompts, n_layers, n_heads] per-head final-token attention entropy in bits;
    n_visible_keys: [n_prompts, n_layers] keys each final token could attend to."""
    entropy = np.asarray(attn_entropy_bits, dtype=np.float64)
    visible = np.asarray(n_visible_keys, dtype=np.float64)
    if entropy.ndim != 3:
        raise AnalysisError(f"attn_entropy_bits must be [n_prompts, n_layers, n_heads], got shape {entropy.shape}")
    n, n_layers, n_heads = entropy.shape
    if visible.shape != (n, n_layers):
        raise AnalysisError(f"n_visible_keys must be [n_prompts, n_layers] = {(n, n_layers)}, got shape {visible.shape}")
    if n < 2 or n_layers < 2:
        raise AnalysisError(f"attention focusing needs at least 2 prompts and 2 layers, got {n} and {n_layers}")
    if not np.isfinite(entropy).all():
        raise NumericalError("NaN in attention entropies: re-extract with eager attention in float32")

    head_mean = entropy.mean(axis=2)  # [n, L]
    if head_mean[:, 0].mean() <= 0:
        raise AnalysisError("layer-0 mean attention entropy is 0 (every head attends to one key): "
                         "the relative reduction 1 - Hbar(L-1)/Hbar(0) is undefined")
    with np.errstate(invalid="ignore", divide="ignore"):
        normalised = np.where(visible > 1, head_mean / np.log2(np.where(visible > 1, visible, 2.0)), np.nan)

    bits = _profile(head_mean, n_boot, seed)
    return AttentionFocusing(
        n_prompts=n, n_layers=n_layers, n_heads=n_heads,
        hbar_bits=bits["hbar"], head_bits=entropy.mean(axis=0).tolist(), hbar_bits_ci95=bits["hbar_ci95"],
        reduction=bits["reduction"],
        focusing=bits["focusing"], focusing_ci95=bits["focusing_ci95"],
        largest_reduction=bits["largest_reduction"], largest_reduction_layer=bits["largest_reduction_layer"],
        largest_reduction_ci95=bits["largest_reduction_ci95"], monotonicity=bits["monotonicity"],
        normalised=_profile(normalised, n_boot, seed), n_excluded_normalised=int((visible <= 1).sum()),
        ci_method=bits["ci_method"], n_boot=n_boot, seed=seed)
