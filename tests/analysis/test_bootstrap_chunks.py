"""Bootstraps draw their resamples a chunk at a time (analysis.bootstrap.resample_chunks): the same
numbers as one [n_boot, n] draw, for every statistic that resamples prompts, and memory that
does not grow with n_boot * n."""

from __future__ import annotations

import dataclasses
import tracemalloc

import numpy as np
import pytest

import geomprobe.analysis.bootstrap as bootstrap
from geomprobe.analysis.ablation_metrics import pearson_change
from geomprobe.analysis.confounds import rank_partial_correlation, within_stratum_spearman
from geomprobe.analysis.focusing import attention_focusing
from geomprobe.analysis.qk_alignment import qk_alignment
from geomprobe.analysis.sula_metrics import correlation
from geomprobe.analysis.value_manifold import value_manifold

N = 157
_rng = np.random.default_rng(5)
X = _rng.normal(size=N)
Y = X + _rng.normal(size=N)
K = _rng.integers(0, 4, N)
C = _rng.normal(size=N)
ENTROPY = np.abs(_rng.normal(size=(N, 4, 3))) + 0.5
VISIBLE = _rng.integers(1, 9, size=(N, 4))
PROBS = _rng.dirichlet(np.ones(6), size=(40, 3, 2)).reshape(40, 3, 2, 6)
COSINE = _rng.normal(size=PROBS.shape)
MATRIX = _rng.normal(size=(60, 12)) * np.linspace(3, 0.2, 12)
MATRIX_ENTROPY = _rng.random(60)


def _as_plain(result):
    return repr(dataclasses.asdict(result) if dataclasses.is_dataclass(result) else result)


STATISTICS = {
    "bootstrap_mean_interval": lambda: bootstrap.bootstrap_mean_interval(X, 1000, 3),
    "attention_focusing": lambda: attention_focusing(ENTROPY, VISIBLE, 500, 2),
    "spearman": lambda: correlation(X, Y, "spearman", 700, 1),
    "pearson": lambda: correlation(X, Y, "pearson", 700, 1),
    "pearson_change": lambda: pearson_change(X, Y, Y + 0.3 * C, 600, 4),
    "rank_partial_correlation": lambda: rank_partial_correlation(X, Y, [C], K, n_boot=400, seed=6),
    "within_stratum_spearman": lambda: within_stratum_spearman(X, Y, K, 300, 400, 7),
    "qk_alignment": lambda: qk_alignment(PROBS, COSINE, np.ones((40, 6), bool), sequence=np.arange(40) // 2,
                                         n_boot=300, seed=2),
    "value_manifold": lambda: value_manifold(MATRIX, entropy_bits=MATRIX_ENTROPY, n_boot=200, n_null=20, seed=1),
}


def test_chunks_concatenate_to_one_draw():
    for n, n_boot, budget in ((7, 1000, 50), (1000, 333, 4096), (20001, 10, 1)):
        whole = np.random.default_rng(3).integers(0, n, size=(n_boot, n))
        rng = np.random.default_rng(3)
        old = bootstrap.RESAMPLE_BUDGET
        bootstrap.RESAMPLE_BUDGET = budget
        try:
            chunks = list(bootstrap.resample_chunks(rng, n, n_boot))
        finally:
            bootstrap.RESAMPLE_BUDGET = old
        assert len(chunks) == -(-n_boot // max(1, min(n_boot, budget // n)))
        assert max(len(c) for c in chunks) * n <= max(budget, n)
        np.testing.assert_array_equal(np.concatenate(chunks), whole)


@pytest.mark.parametrize("name", sorted(STATISTICS))
def test_chunked_statistic_equals_one_draw(name, monkeypatch):
    """At the default budget these small samples are drawn in one chunk, i.e. as the whole
    [n_boot, n] array was drawn before chunking; at a budget of 50 values, one resample or a few per
    chunk. The results are identical, bit for bit, intervals and methods included."""
    assert bootstrap.chunk_rows(1000, N * 8) == 1000  # one chunk at the default budget (<= 8 values a prompt)
    whole = _as_plain(STATISTICS[name]())
    monkeypatch.setattr(bootstrap, "RESAMPLE_BUDGET", 50)
    assert bootstrap.chunk_rows(1000, N) == 1
    assert _as_plain(STATISTICS[name]()) == whole


def test_mean_interval_is_the_unchunked_formula_and_scipy():
    from scipy.stats import bootstrap as scipy_bootstrap

    rng = np.random.default_rng(11)
    samples = rng.exponential(size=300)
    means = samples[np.random.default_rng(4).integers(0, 300, size=(1000, 300))].mean(axis=1)
    mean, low, high, method = bootstrap.bootstrap_mean_interval(samples, 1000, 4)
    assert method == "BCa"
    assert (low, high, method) == bootstrap.bca_interval(samples.mean(), means,
                                                         (samples.sum() - samples) / 299)
    ref = scipy_bootstrap((samples,), np.mean, n_resamples=1000, method="BCa", rng=np.random.default_rng(4))
    np.testing.assert_allclose([low, high], [ref.confidence_interval.low, ref.confidence_interval.high], rtol=1e-9)


def test_paired_means_equal_separate_calls():
    rng = np.random.default_rng(2)
    a, b = rng.normal(size=500), rng.gamma(2.0, size=500)
    assert bootstrap.bootstrap_mean_intervals([a, b], 400, 9) == [
        bootstrap.bootstrap_mean_interval(a, 400, 9), bootstrap.bootstrap_mean_interval(b, 400, 9)]
    with pytest.raises(Exception, match="one length"):
        bootstrap.bootstrap_mean_intervals([a, b[:10]], 400, 9)


def test_memory_is_flat_in_the_number_of_prompts():
    """One [1000, n] draw held int64 indices and float64 values: 16 MB per 1,000 prompts (1.6 GB
    at 100k). Chunked, the peak stays near RESAMPLE_BUDGET's 16 MiB of indices plus the gathered
    chunk, whatever n is."""
    peaks = {}
    for n in (2_000, 200_000):
        samples = np.random.default_rng(0).normal(size=n)
        tracemalloc.start()
        bootstrap.bootstrap_mean_interval(samples, 1000, 0)
        peaks[n] = tracemalloc.get_traced_memory()[1] - 0
        tracemalloc.stop()
    unchunked_200k = 1000 * 200_000 * 16
    assert peaks[200_000] < 48 * 2**20, peaks  # the unchunked draw: 3.2 GB
    assert peaks[200_000] < unchunked_200k / 50
    assert peaks[200_000] < 3 * max(peaks[2_000], 8 * 2**20), peaks
