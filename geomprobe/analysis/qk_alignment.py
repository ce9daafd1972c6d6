"""Q-K alignment per layer (paper I: diffuse alignment at layer 0, concentrated by the
last layer). numpy only: the rows come from geomprobe.mechanisms.

    qk = qk_alignment(probs, cosine, visible, evidence=mask, sequence=seq_of_row)
    qk.metrics["attn_entropy_bits"]["value"][layer], qk.metrics["evidence_mass"]["per_head"][layer][head]

One row is one query position of one sequence. For every row, layer and head:
    attn_entropy_bits        -sum_j a_j log2 a_j over the keys the query may see (itself included)
    attn_entropy_normalised  that entropy / log2(n visible keys) (undefined with one visible key)
    top_weight               max_j a_j
    cos_mean, cos_max        mean and max over visible keys of cos(q, k_j) (post-rotary q and k)
    evidence_mass            sum of a_j over the evidence positions (geomprobe.windtunnel.evidence)
    cos_evidence_minus_other mean cos(q, k_j) over evidence keys minus over the other visible keys
Rows without evidence (e.g. the first key of a bijection) are left out of the evidence metrics.
`evidence_uniform_share` is n_evidence / n_visible: the evidence mass a uniform attention row
would give, the baseline of evidence_mass.

Aggregation: each sequence's rows are averaged first, then the sequences (equal weight per
sequence); the 95% CIs resample sequences (BCa bootstrap, percentile where BCa is undefined; the
method of each layer's interval in `ci_method`), so the several query rows of a sequence are never
counted as independent. Head-averaged numbers average the per-head statistics
(never the attention distributions, which would add a Jensen bias).
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from dataclasses import dataclass

import numpy as np

from geomprobe.analysis.bootstrap import bca_interval, resample_chunks
from geomprobe.errors import AnalysisError

METRICS = ("attn_entropy_bits", "attn_entropy_normalised", "top_weight", "cos_mean", "cos_max", "evidence_mass",
           "cos_evidence_minus_other")


def attention_entropy_bits(probs) -> np.ndarray:
    """Entropy in bits of each attention row: [..., T] -> [...] (0 log 0 = 0)."""
    p = np.asarray(probs, dtype=np.float64)
    return 0.0 - (p * np.log2(np.where(p > 0, p, 1.0))).sum(-1)


def _row_statistics(probs, cosine, visible, evidence) -> dict[str, np.ndarray]:
    """Each metric as [n_rows, L, H] (NaN where undefined)."""
    p = np.asarray(probs, dtype=np.float64)
    cos = np.asarray(cosine, dtype=np.float64)
    vis = np.asarray(visible, dtype=bool)[:, None, None, :]
    n_visible = vis.sum(-1).astype(np.float64)  # [n, 1, 1]
    entropy = attention_entropy_bits(p)
    with np.errstate(invalid="ignore", divide="ignore"):
        normalised = np.where(n_visible > 1, entropy / np.log2(np.where(n_visible > 1, n_visible, 2.0)), np.nan)
        cos_visible = np.where(vis, cos, np.nan)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # rows with no visible key (padding): NaN
            stats = {"attn_entropy_bits": entropy, "attn_entropy_normalised": normalised,
                     "top_weight": p.max(-1), "cos_mean": np.nanmean(cos_visible, -1),
                     "cos_max": np.nanmax(cos_visible, -1)}
            if evidence is not None:
                ev = np.asarray(evidence, dtype=bool)[:, None, None, :] & vis
                has = ev.any(-1)
                other = vis & ~ev
                stats["evidence_mass"] = np.where(has, (p * ev).sum(-1), np.nan)
                cos_ev = np.nanmean(np.where(ev, cos, np.nan), -1)
                cos_other = np.nanmean(np.where(other, cos, np.nan), -1)
                stats["cos_evidence_minus_other"] = np.where(has, cos_ev - cos_other, np.nan)
    return stats


def _per_sequence(values: np.ndarray, sequence: np.ndarray, n_sequences: int) -> np.ndarray:
    """[n_rows, ...] -> [n_sequences, ...] nan-mean of each sequence's rows."""
    valid = np.isfinite(values)
    sums = np.zeros((n_sequences, *values.shape[1:]))
    counts = np.zeros_like(sums)
    np.add.at(sums, sequence, np.where(valid, values, 0.0))
    np.add.at(counts, sequence, valid)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)


def _nanmean(values: np.ndarray, axis: int) -> np.ndarray:
    valid = np.isfinite(values)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(valid.sum(axis) > 0, np.where(valid, values, 0.0).sum(axis) / valid.sum(axis), np.nan)


def per_sequence_metrics(probs, cosine, visible, evidence=None, sequence=None) -> dict[str, np.ndarray]:
    """Each metric as [n_sequences, L]: the head average of each sequence's row mean (NaN where
    undefined), sequences in sorted order of `sequence`. The units qk_alignment averages, and so
    the units a comparison with an untrained copy resamples (geomprobe.analysis.null_comparison)."""
    n_rows = len(probs)
    sequence = np.arange(n_rows) if sequence is None else np.unique(np.asarray(sequence), return_inverse=True)[1]
    n_sequences = int(sequence.max()) + 1
    return {name: _nanmean(_per_sequence(values, sequence, n_sequences), 2)
            for name, values in _row_statistics(probs, cosine, visible, evidence).items()}


def _leave_one_out_means(values: np.ndarray) -> np.ndarray:
    """[m] the mean of the finite entries of `values` [S] with each finite one left out in turn
    (the sequences without a value leave the mean unchanged, so they add nothing to BCa's
    acceleration and are not listed); NaN when fewer than 2 are finite."""
    finite = values[np.isfinite(values)]
    if finite.size < 2:
        return np.full(max(finite.size, 1), np.nan)
    return (finite.sum() - finite) / (finite.size - 1)


def _num(value) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


@dataclass(frozen=True)
class QKAlignment:
    """Per-layer summaries. metrics[name] = {"value": [L] (head-averaged), "ci95": [L][2], "method",
    "n" (the sequences with a value), "per_head": [L][H], "ci_method": [L] ("BCa", "percentile" or
    "none")}: a per-layer vector Estimate; evidence metrics are absent when no evidence was given."""

    n_rows: int
    n_sequences: int
    n_layers: int
    n_heads: int
    layers: list
    metrics: dict
    evidence_uniform_share: float | None  # mean over evidence rows of n_evidence / n_visible
    n_evidence_rows: int
    n_boot: int
    seed: int

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def qk_alignment(probs, cosine, visible, evidence=None, sequence=None, layers=None, n_boot: int = 1000,
                 seed: int = 0) -> QKAlignment:
    """probs, cosine: [n_rows, L, H, T] (cosine NaN at keys the row may not see); visible: bool
    [n_rows, T]; evidence: bool [n_rows, T] or None; sequence: int [n_rows], the sequence each row
    belongs to (default: each row its own); layers: the layer index of each of the L columns."""
    probs = np.asarray(probs)
    if probs.ndim != 4:
        raise AnalysisError(f"probs must be [n_rows, n_layers, n_heads, seq_len], got shape {probs.shape}")
    n_rows, n_layers, n_heads, seq_len = probs.shape
    if np.shape(cosine) != probs.shape:
        raise AnalysisError(f"cosine has shape {np.shape(cosine)}, probs {probs.shape}")
    if np.shape(visible) != (n_rows, seq_len):
        raise AnalysisError(f"visible must be [n_rows, seq_len] = {(n_rows, seq_len)}, got {np.shape(visible)}")
    if evidence is not None and np.shape(evidence) != (n_rows, seq_len):
        raise AnalysisError(f"evidence must be [n_rows, seq_len] = {(n_rows, seq_len)}, got {np.shape(evidence)}")
    if n_rows < 2:
        raise AnalysisError(f"Q-K alignment needs at least 2 query rows, got {n_rows}")
    sequence = np.arange(n_rows) if sequence is None else np.unique(np.asarray(sequence), return_inverse=True)[1]
    n_sequences = int(sequence.max()) + 1
    stats = _row_statistics(probs, cosine, visible, evidence)
    method = ("per layer, the head average of each sequence's row mean, averaged over sequences; "
              + (f"BCa bootstrap 95% CI over sequences ({n_boot} resamples; percentile where BCa is undefined, "
                 f"per layer in ci_method)" if n_boot else "no CI (n_boot 0)"))
    metrics = {}
    for name, values in stats.items():
        per_seq = _per_sequence(values, sequence, n_sequences)  # [S, L, H]
        head_mean = _nanmean(per_seq, 2)  # [S, L]
        boot_means = np.stack([_nanmean(head_mean[index], 0)  # the same resampled sequences for every metric
                               for chunk in resample_chunks(np.random.default_rng(seed), n_sequences, n_boot)
                               for index in chunk]) if n_boot else None
        layer_means = _nanmean(head_mean, 0)
        cis, ci_methods = [], []
        for layer in range(n_layers):
            samples = boot_means[:, layer][np.isfinite(boot_means[:, layer])] if n_boot else np.array([])
            low, high, ci_method = (bca_interval(layer_means[layer], samples, _leave_one_out_means(head_mean[:, layer]))
                                    if samples.size else (None, None, "none"))
            cis.append([low, high])
            ci_methods.append(ci_method)
        metrics[name] = {"value": [_num(v) for v in layer_means], "ci95": cis, "method": method,
                         "n": int(np.isfinite(head_mean).any(axis=1).sum()),
                         "per_head": [[_num(v) for v in row] for row in _nanmean(per_seq, 0)], "ci_method": ci_methods}
    share, n_evidence_rows = None, 0
    if evidence is not None:
        ev = np.asarray(evidence, dtype=bool) & np.asarray(visible, dtype=bool)
        rows = ev.any(-1)
        n_evidence_rows = int(rows.sum())
        if n_evidence_rows:  # averaged like the metrics: over each sequence's rows, then over sequences
            with np.errstate(invalid="ignore", divide="ignore"):
                row_share = np.where(rows, ev.sum(-1) / np.asarray(visible).sum(-1), np.nan)
            share = _num(_nanmean(_per_sequence(row_share, sequence, n_sequences), 0))
    return QKAlignment(n_rows=n_rows, n_sequences=n_sequences, n_layers=n_layers, n_heads=n_heads,
                       layers=list(range(n_layers)) if layers is None else [int(v) for v in layers],
                       metrics=metrics, evidence_uniform_share=share, n_evidence_rows=n_evidence_rows,
                       n_boot=n_boot, seed=seed)
