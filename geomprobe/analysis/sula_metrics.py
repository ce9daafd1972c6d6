"""SULA statistics (METHODS.md section 7): model entropy on the two labels, agreement with Bayes,
and the entropy axis (PC1 of standardised final-token values). numpy/scipy only.

    side = restrict_to_labels(token_probs)             # token_probs [n, 2]: p(L1), p(L2), full vocabulary
    side["H_model"]                                     # [n] bits, restricted to {L1, L2} and renormalised
    axis = fit_axis(values_last.reshape(n, -1), side["H_model"])
    pc1 = axis.project(values_last.reshape(n, -1))      # [n], also for control prompts (main basis)
    metrics = condition_metrics(k, H_bayes, side["H_model"], pc1, side["label_mass"], ...)

The axis follows METHODS.md section 8.1: columns standardised with the main prompts' means and
scales (zero-variance columns dropped), u = the unit PC1 loading, oriented so that Spearman
rho(z . u, H_model) >= 0, sigma_u = std of z . u over the main prompts. Control prompts are
standardised with the same means and scales and projected on the same u.

H_bayes falls with k, so rho(PC1, H_bayes) over all k is confounded with k (and with prompt
length): confound_metrics adds the partial correlation given k (the headline), the within-k
rhos with a permutation test, the partial correlations given the length in tokens, and the
trivial MAE baselines (geomprobe.analysis.confounds).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from geomprobe.analysis.bootstrap import (
    PERCENTILE,
    bca_interval,
    bootstrap_mean_estimate,
    excludes_estimate_note,
    grouped_jackknife_rows,
    resample_chunks,
)
from geomprobe.analysis.confounds import rank_partial_correlation, trivial_mae_baselines, within_stratum_spearman
from geomprobe.analysis.estimate import Estimate, estimate
from geomprobe.analysis.windtunnel_metrics import entropy_bits
from geomprobe.errors import AnalysisError

TINY = 1e-12


def restrict_to_labels(token_probs) -> dict[str, np.ndarray]:
    """token_probs [n, 2]: full-vocabulary next-token probabilities of (L1, L2).
    Returns p_model_l1 [n] (renormalised over the two), H_model [n] (bits) and label_mass [n]."""
    probs = np.asarray(token_probs, dtype=np.float64)
    if probs.ndim != 2 or probs.shape[1] != 2:
        raise AnalysisError(f"token_probs must be [n_prompts, 2] (L1, L2), got shape {probs.shape}")
    mass = probs.sum(axis=1)
    restricted = probs / np.maximum(mass, TINY)[:, None]
    return {"p_model_l1": restricted[:, 0], "H_model": entropy_bits(restricted), "label_mass": mass}


def binary_kl_bits(p_true, p_model) -> np.ndarray:
    """KL(Bernoulli(p_true) || Bernoulli(p_model)) in bits, elementwise, 0 log 0 = 0."""
    p = np.stack([np.asarray(p_true, dtype=np.float64), 1 - np.asarray(p_true, dtype=np.float64)], -1)
    q = np.clip(np.stack([np.asarray(p_model, dtype=np.float64), 1 - np.asarray(p_model, dtype=np.float64)], -1),
                TINY, 1.0)
    logs = np.log2(np.where(p > 0, p, 1.0) / q)
    return np.maximum((p * logs).sum(-1), 0.0)


# ----------------------------------------------------------------------------------------------
# The entropy axis


@dataclass(frozen=True)
class SulaAxis:
    """PC1 of the standardised main-condition values, with what is needed to project other prompts.

    mean, scale: [p] column means and standard deviations (scale 1 on dropped columns);
    kept: [p] bool, columns that vary over the main prompts; u: [p] unit PC1 loading (0 on dropped
    columns); sigma_u: std of z . u over the main prompts.
    """

    mean: np.ndarray
    scale: np.ndarray
    kept: np.ndarray
    u: np.ndarray
    sigma_u: float
    pc1_explained: float  # lambda_1 / sum(lambda)
    pc12_explained: float
    n_dropped_columns: int
    rho_pc1_H_model_raw: float | None  # Spearman, with the SVD's own sign
    sign: str

    def standardise(self, matrix) -> np.ndarray:
        matrix = np.asarray(matrix, dtype=np.float64)
        return np.where(self.kept, (matrix - self.mean) / self.scale, 0.0)

    def project(self, matrix) -> np.ndarray:
        """[n, p] vectors -> [n] coordinates z . u in the main condition's basis."""
        return self.standardise(matrix) @ self.u

    def summary(self) -> dict:
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
               if f.name not in ("mean", "scale", "kept", "u")}
        out["n_columns"] = int(self.kept.size)
        return out


def fit_axis(matrix, H_model) -> SulaAxis:
    """matrix: [n_prompts, p] final-token vectors of the main prompts; H_model: [n_prompts] bits.
    Raises ValueError when fewer than 3 prompts or no column varies."""
    matrix = np.asarray(matrix, dtype=np.float64)
    if matrix.ndim != 2 or matrix.shape[0] < 3:
        raise AnalysisError(f"the SULA axis needs a [n_prompts >= 3, p] matrix, got shape {matrix.shape}")
    if not np.isfinite(matrix).all():
        raise AnalysisError("the SULA value matrix has NaN or infinite entries")
    mean = matrix.mean(axis=0)
    std = matrix.std(axis=0)
    kept = std > 1e-12 * max(1.0, float(np.abs(matrix).max(initial=0.0)))  # as analysis.pca.standardise
    if not kept.any():
        raise AnalysisError(f"all {matrix.shape[1]} columns have zero variance across the SULA prompts")
    scale = np.where(kept, std, 1.0)
    z = np.where(kept, (matrix - mean) / scale, 0.0)
    _, singular, vt = np.linalg.svd(z[:, kept], full_matrices=False)
    eig = singular**2
    u = np.zeros(matrix.shape[1])
    u[kept] = vt[0]
    coords = z @ u
    rho = spearman_or_none(coords, H_model)
    flipped = rho is not None and rho < 0
    if flipped:
        u, coords = -u, -coords
    sign = ("oriented so that Spearman rho(PC1, H_model) >= 0" + (" (flipped)" if flipped else "")
            if rho is not None else "H_model constant: sign as the SVD gave it")
    return SulaAxis(mean=mean, scale=scale, kept=kept, u=u, sigma_u=float(coords.std()),
                    pc1_explained=float(eig[0] / eig.sum()), pc12_explained=float(eig[:2].sum() / eig.sum()),
                    n_dropped_columns=int((~kept).sum()), rho_pc1_H_model_raw=rho, sign=sign)


# ----------------------------------------------------------------------------------------------
# Correlations and means with bootstrap intervals


def _constant(x) -> bool:
    x = np.asarray(x, dtype=np.float64)
    return bool(np.ptp(x) <= 1e-12 * max(1.0, float(np.abs(x).max(initial=0.0))))


def spearman_or_none(x, y) -> float | None:
    """Spearman rho, or None when either side is constant."""
    if _constant(x) or _constant(y):
        return None
    from scipy.stats import spearmanr

    return float(spearmanr(x, y)[0])


def _rowwise_pearson(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a = a - a.mean(axis=1, keepdims=True)
    b = b - b.mean(axis=1, keepdims=True)
    denom = np.sqrt((a * a).sum(axis=1) * (b * b).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denom > 0, (a * b).sum(axis=1) / denom, np.nan)


CORRELATION_NAMES = {"spearman": "Spearman rho", "pearson": "Pearson r"}


def correlation_method(method: str, n_boot: int, ci_method: str = PERCENTILE) -> str:
    """The Estimate `method` of correlation(..., method, n_boot); ci_method: the interval made
    ("BCa" or "percentile", geomprobe.analysis.bootstrap)."""
    return (f"{CORRELATION_NAMES[method]}, {ci_method} bootstrap 95% CI over prompts (pairs resampled, {n_boot} "
            f"resamples; resamples with a constant side skipped)")


def correlation(x, y, method: str = "spearman", n_boot: int = 1000, seed: int = 0) -> Estimate:
    """An Estimate {"value", "ci95", "method", "n", "pvalue"} of the Pearson or Spearman correlation
    of x and y; the CI is a bootstrap over prompts (pairs resampled; resamples where either side is
    constant are skipped), BCa with a grouped jackknife where it is defined, percentile otherwise
    (geomprobe.analysis.bootstrap), the method string naming which; a note where the interval
    misses the estimate. value None, with a note, when x or y is constant (e.g. H_bayes = 1
    everywhere)."""
    if method not in CORRELATION_NAMES:
        raise AnalysisError(f"method must be 'spearman' or 'pearson', got '{method}'")
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    entry = estimate(None, (None, None), correlation_method(method, n_boot), len(x), pvalue=None)
    if len(x) < 3 or _constant(x) or _constant(y):
        entry["note"] = "undefined: one side is constant" if len(x) >= 3 else "undefined: fewer than 3 prompts"
        return entry
    from scipy.stats import pearsonr, rankdata, spearmanr

    value, pvalue = (spearmanr if method == "spearman" else pearsonr)(x, y)
    boot = []
    for idx in resample_chunks(np.random.default_rng(seed), len(x), n_boot, 2):
        xs, ys = x[idx], y[idx]
        if method == "spearman":
            xs, ys = rankdata(xs, axis=1), rankdata(ys, axis=1)
        boot.append(_rowwise_pearson(xs, ys))
    boot = np.concatenate(boot) if boot else np.zeros(0)
    boot = boot[np.isfinite(boot)]
    entry.update(value=_finite(value), pvalue=_finite(pvalue))
    if len(boot):
        jackknife = grouped_jackknife_rows(lambda kept: _correlation_values(x[kept], y[kept], method), len(x))
        low, high, ci_method = bca_interval(entry["value"], boot, jackknife)
        entry.update(ci95=[low, high], method=correlation_method(method, n_boot, ci_method))
        note = excludes_estimate_note(entry["value"], low, high)
        if note:
            entry["note"] = note
    return entry


def _correlation_values(x: np.ndarray, y: np.ndarray, method: str) -> np.ndarray:
    """[b] the correlation of each row of x [b, m] with the same row of y, as the bootstrap computes
    it (Pearson of the ranks for Spearman); NaN where a side is constant."""
    if method == "spearman":
        from scipy.stats import rankdata

        x, y = rankdata(x, axis=-1), rankdata(y, axis=-1)
    return _rowwise_pearson(x, y)


def _finite(value) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


def mean_ci(samples, n_boot: int = 1000, seed: int = 0, unit: str = "prompts") -> Estimate:
    """An Estimate {"value", "ci95", "method", "n"}: the mean over prompts with a bootstrap 95% CI
    (BCa, percentile where BCa is undefined; geomprobe.analysis.bootstrap.bootstrap_mean_estimate)."""
    return bootstrap_mean_estimate(samples, n_boot=n_boot, seed=seed, unit=unit)


# ----------------------------------------------------------------------------------------------
# One condition's metrics


CONFOUND_NOTES = {
    "rho_pc1_H_bayes": "over all k, confounded with k: H_bayes falls with k, so an axis that only tracks k or the "
                       "prompt length scores here too; the controlled figure is rho_pc1_H_bayes_given_k",
    "rho_k_pc1": "the confound itself: how much PC1 tracks the number of examples",
    "rho_n_tokens_pc1": "the length confound: how much PC1 tracks the prompt length in tokens",
}


def _labelled(entry: Estimate, name: str) -> Estimate:
    if entry["value"] is not None:
        entry["note"] = CONFOUND_NOTES[name] + (f"; {entry['note']}" if entry.get("note") else "")
    return entry


def confound_metrics(k, H_bayes, pc1, H_model, n_tokens=None, n_boot: int = 1000, n_perm: int = 999,
                     seed: int = 0) -> tuple[dict, dict]:
    """The controlled entropy-axis statistics and the trivial MAE baselines of METHODS.md section 7
    ("Confounds"), as (condition-level entries, {k: within-k Estimate of rho(PC1, H_bayes)}).

    rho_pc1_H_bayes_given_k: Spearman partial correlation given k (one indicator per k), the
    headline; rho_pc1_H_bayes_within_k: the prompt-weighted mean within-k Spearman rho, p from
    shuffling PC1 within each k; with n_tokens [n_prompts] (prompt length in tokens): the partial
    correlation given the length and given both, and rho(n_tokens, PC1); mae_baselines: constant,
    k-only and H = 0 predictors against the model on a held-out half
    (geomprobe.analysis.confounds)."""
    per_k, pooled = within_stratum_spearman(pc1, H_bayes, k, n_perm=n_perm, n_boot=n_boot, seed=seed)
    out = {"rho_pc1_H_bayes_given_k": rank_partial_correlation(pc1, H_bayes, strata=k, names=["k"], n_boot=n_boot,
                                                               seed=seed),
           "rho_pc1_H_bayes_within_k": pooled}
    if n_tokens is not None:
        out["rho_pc1_H_bayes_given_n_tokens"] = rank_partial_correlation(
            pc1, H_bayes, covariates=[n_tokens], names=["prompt length in tokens"], n_boot=n_boot, seed=seed)
        out["rho_pc1_H_bayes_given_k_n_tokens"] = rank_partial_correlation(
            pc1, H_bayes, covariates=[n_tokens], strata=k, names=["k", "prompt length in tokens"], n_boot=n_boot,
            seed=seed)
        out["rho_n_tokens_pc1"] = _labelled(correlation(n_tokens, pc1, "spearman", n_boot, seed), "rho_n_tokens_pc1")
    out["mae_baselines"] = trivial_mae_baselines(H_bayes, H_model, k, n_boot=n_boot, seed=seed)
    return out, per_k


def condition_metrics(k, H_bayes, H_model, pc1, label_mass, kl_bits, next_entropy_bits=None,
                      n_boot: int = 1000, seed: int = 0, p_model_l1=None, n_tokens=None, n_perm: int = 999) -> dict:
    """Every per-condition number of METHODS.md section 7. All inputs [n_prompts]; entropies in bits.
    pc1: the prompts' coordinates on the main condition's axis. p_model_l1 (optional): the model's
    renormalised p(L1); rho(PC1, p_model_l1) shows an axis that tracks the signed evidence, of which
    the entropy is a symmetric (non-monotone) function. n_tokens (optional): prompt lengths in
    tokens, for the partial correlations given the length (confound_metrics); n_perm: permutations
    of the within-k test."""
    k = np.asarray(k)
    H_bayes, H_model, pc1 = (np.asarray(a, dtype=np.float64) for a in (H_bayes, H_model, pc1))
    error = np.abs(H_model - H_bayes)
    confounds, within_k = confound_metrics(k, H_bayes, pc1, H_model, n_tokens, n_boot=n_boot, n_perm=n_perm,
                                           seed=seed)
    out = {
        "n_prompts": int(len(k)),
        "mae_bits": mean_ci(error, n_boot, seed),
        "H_bayes": mean_ci(H_bayes, n_boot, seed),
        "H_model": mean_ci(H_model, n_boot, seed),
        "kl_bits": mean_ci(kl_bits, n_boot, seed),
        "label_mass": mean_ci(label_mass, n_boot, seed),
        "pearson_H_model_H_bayes": correlation(H_model, H_bayes, "pearson", n_boot, seed),
        "spearman_H_model_H_bayes": correlation(H_model, H_bayes, "spearman", n_boot, seed),
        "rho_pc1_H_bayes": _labelled(correlation(pc1, H_bayes, "spearman", n_boot, seed), "rho_pc1_H_bayes"),
        "rho_pc1_H_model": correlation(pc1, H_model, "spearman", n_boot, seed),
        "rho_k_pc1": _labelled(correlation(k, pc1, "spearman", n_boot, seed), "rho_k_pc1"),
        "pc1": mean_ci(pc1, n_boot, seed),
        **confounds,
    }
    if p_model_l1 is not None:
        out["rho_pc1_p_model_l1"] = correlation(pc1, p_model_l1, "spearman", n_boot, seed)
    if next_entropy_bits is not None:
        out["next_entropy_bits"] = mean_ci(next_entropy_bits, n_boot, seed)
    per_k = []
    for value in sorted(set(int(v) for v in k)):
        rows = k == value
        per_k.append({
            "k": value, "n": int(rows.sum()),
            "H_bayes": mean_ci(H_bayes[rows], n_boot, seed),
            "H_model": mean_ci(H_model[rows], n_boot, seed),
            "mae_bits": mean_ci(error[rows], n_boot, seed),
            "kl_bits": float(np.mean(np.asarray(kl_bits)[rows])),
            "label_mass": float(np.mean(np.asarray(label_mass)[rows])),
            "pc1": mean_ci(pc1[rows], n_boot, seed),
            "rho_pc1_H_bayes": within_k[value],
        })
    out["per_k"] = per_k
    return out
