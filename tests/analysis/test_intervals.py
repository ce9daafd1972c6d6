"""Bootstrap and jackknife intervals (geomprobe.analysis.bootstrap; METHODS.md section 2.3) against
scipy.stats.bootstrap and against cases whose answer is known: the coverage of a Gaussian mean,
degenerate samples, and a spiked-covariance value matrix with n prompts << p columns."""

import warnings

import numpy as np
import pytest
from scipy.stats import bootstrap

from geomprobe.analysis.bootstrap import (
    bca_interval,
    bootstrap_mean_estimate,
    bootstrap_mean_interval,
    bootstrap_rows,
    excludes_estimate_note,
    grouped_jackknife,
    jackknife_groups,
    jackknife_interval,
    stratified_bca_interval,
)
from geomprobe.analysis.pca import standardise
from geomprobe.analysis.value_manifold import _resampled_statistics, value_manifold


@pytest.mark.parametrize("n", [5, 30, 250])
@pytest.mark.parametrize("skewed", [False, True])
def test_mean_interval_equals_scipy_bca(n, skewed):
    """Same rng, same resamples: the closed-form jackknife gives scipy's BCa interval exactly."""
    rng = np.random.default_rng(n)
    samples = rng.exponential(size=n) if skewed else rng.normal(size=n)
    mean, low, high, method = bootstrap_mean_interval(samples, n_boot=1000, seed=7)
    reference = bootstrap((samples,), np.mean, n_resamples=1000, method="BCa", vectorized=True,
                          rng=np.random.default_rng(7)).confidence_interval
    assert method == "BCa" and mean == pytest.approx(samples.mean())
    assert [low, high] == pytest.approx([reference.low, reference.high], rel=1e-12, abs=1e-12)


def test_bootstrap_rows_is_scipy_bca_on_row_indices():
    """bootstrap_rows (the value manifold's path) and bootstrap_mean_interval draw the same
    resamples from the same seed, so for the mean they agree."""
    samples = np.random.default_rng(1).gamma(2.0, size=60)
    (low, high, method), = bootstrap_rows(lambda rows: np.array([samples[rows].mean()]), 60, 500,
                                          np.random.default_rng(3))
    _, low_mean, high_mean, method_mean = bootstrap_mean_interval(samples, n_boot=500, seed=3)
    assert method == method_mean == "BCa"
    assert [low, high] == pytest.approx([low_mean, high_mean], rel=1e-12)


def test_bca_interval_of_a_gaussian_mean_covers_at_the_nominal_rate():
    """200 replicates of n = 40 draws from N(1, 2^2): the 95% BCa interval covers the true mean about
    95% of the time (binomial sd 1.5%)."""
    rng = np.random.default_rng(2024)
    covered, methods = 0, set()
    for replicate in range(200):
        samples = rng.normal(1.0, 2.0, size=40)
        _, low, high, method = bootstrap_mean_interval(samples, n_boot=1000, seed=replicate)
        covered += low <= 1.0 <= high
        methods.add(method)
    assert methods == {"BCa"}
    assert 0.88 <= covered / 200 <= 0.99


def test_degenerate_cases_fall_back_to_percentile():
    # constant samples: the jackknife has no spread (a = 0/0)
    assert bootstrap_mean_interval(np.full(10, 2.5))[1:] == (2.5, 2.5, "percentile")
    boot = np.linspace(1.0, 2.0, 101)
    jackknife = np.linspace(0.9, 1.1, 20)
    assert bca_interval(1.5, boot, jackknife)[2] == "BCa"
    assert bca_interval(3.0, boot, jackknife)[2] == "percentile"  # every resample below: z0 infinite
    assert bca_interval(1.5, boot, np.ones(20))[2] == "percentile"  # degenerate jackknife
    assert bca_interval(1.5, np.append(boot, np.nan), jackknife)[2] == "percentile"  # NaN resample
    # nearly every resample on one side: BCa's adjusted levels reach the extreme resamples
    assert bca_interval(1.995, boot, jackknife)[2] == "percentile"
    low, high, method = bca_interval(1.5, np.full(5, np.nan), jackknife)
    assert (low, high, method) == (None, None, "none")


def test_mean_estimate_names_its_method():
    entry = bootstrap_mean_estimate(np.random.default_rng(0).normal(size=50), n_boot=200, unit="prompts")
    assert entry["method"] == "mean over prompts, BCa bootstrap 95% CI (200 resamples of the prompts)"
    assert entry["ci95"][0] <= entry["value"] <= entry["ci95"][1] and entry["n"] == 50
    constant = bootstrap_mean_estimate(np.ones(5), n_boot=50, unit="sequences")
    assert constant["method"].startswith("mean over sequences, percentile bootstrap")


def test_jackknife_interval_known_answer():
    """For the mean, the jackknife standard error is the usual s / sqrt(n)."""
    samples = np.random.default_rng(5).normal(size=30)
    leave_one_out = (samples.sum() - samples) / 29
    low, high, method = jackknife_interval(samples.mean(), leave_one_out)
    half = 1.959963984540054 * samples.std(ddof=1) / np.sqrt(30)
    assert method == "jackknife"
    assert [low, high] == pytest.approx([samples.mean() - half, samples.mean() + half], rel=1e-10)
    assert jackknife_interval(1.0, [1.0]) == (None, None, "none")


def _spiked(rng, loadings, n):
    """n rows of a weakly structured matrix: eight latent directions plus isotropic noise."""
    scales = np.sqrt([0.5, 0.3, 0.2, 0.15, 0.1, 0.1, 0.1, 0.1])
    return (rng.standard_normal((n, len(scales))) * scales) @ loadings + rng.standard_normal((n, loadings.shape[1]))


def test_value_manifold_records_its_interval_method_and_whether_the_estimate_is_inside():
    rng = np.random.default_rng(0)
    matrix = _spiked(rng, rng.standard_normal((8, 200)), 40)
    boot = value_manifold(matrix, n_boot=200, n_null=5, seed=1)
    again = value_manifold(matrix, n_boot=200, n_null=5, seed=1)
    assert boot.pc1_ci95 == again.pc1_ci95 and boot.pr_ci95 == again.pr_ci95  # seeded
    for name in ("pc1", "pc12", "pr"):
        low, high = getattr(boot, f"{name}_ci95")
        assert boot.ci_method[name] in ("BCa", "percentile")
        assert boot.ci_contains_estimate[name] == (low <= getattr(boot, name) <= high)
    jack = value_manifold(matrix, n_boot=200, n_null=5, seed=1, ci="jackknife")
    z = standardise(matrix)[0]
    rows = np.arange(40)
    leave_one_out = np.stack([_resampled_statistics(z, np.delete(rows, row)) for row in rows])
    for column, name in enumerate(("pc1", "pc12", "pr")):
        assert jack.ci_method[name] == "jackknife" and jack.ci_contains_estimate[name]
        expected = jackknife_interval(getattr(jack, name), leave_one_out[:, column])[:2]
        assert getattr(jack, f"{name}_ci95") == pytest.approx(list(expected))
    none = value_manifold(matrix, n_boot=0, n_null=5)
    assert none.pr_ci95 == [None, None] and none.ci_method["pr"] == "none" and none.ci_contains_estimate["pr"] is None


@pytest.mark.slow
def test_jackknife_covers_the_value_manifold_statistics_where_the_bootstrap_is_biased():
    """n = 40 prompts, p = 200 columns, weak structure (pc1 about 0.18, pr about 13). The target is the
    statistic's median over fresh samples of the same size (what nulls at the same n, p compare
    with). Resamples with duplicated rows shift pr's bootstrap distribution below the estimate, so
    bootstrap intervals of pr often exclude their own estimate; the jackknife covers at about the
    nominal rate (measured at n = 60, p = 384, 100 replicates: jackknife 92-93% for pc1, pc12 and
    pr; percentile 88%, 81%, 28%; BCa 82%, 67%, 21%)."""
    rng = np.random.default_rng(11)
    loadings = rng.standard_normal((8, 200))
    rows = np.arange(40)
    truth = np.median([_resampled_statistics(standardise(_spiked(rng, loadings, 40))[0], rows)
                       for _ in range(400)], axis=0)
    covered, excluded_by_bootstrap = np.zeros(3), 0
    replicates = 60
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for replicate in range(replicates):
            z = standardise(_spiked(rng, loadings, 40))[0]
            estimate = _resampled_statistics(z, rows)
            leave_one_out = np.stack([_resampled_statistics(z, np.delete(rows, row)) for row in rows])
            for column in range(3):
                low, high, _ = jackknife_interval(estimate[column], leave_one_out[:, column])
                covered[column] += low <= truth[column] <= high
            if replicate < 20:
                low, high, _ = bootstrap_rows(lambda r, z=z: _resampled_statistics(z, r), 40, 200,
                                              np.random.default_rng(replicate))[2]
                excluded_by_bootstrap += not low <= estimate[2] <= high
    assert (covered / replicates >= 0.85).all(), covered / replicates
    assert excluded_by_bootstrap >= 10  # the failure the jackknife exists for


# ----------------------------------------------------------------------------------------------
# Where a percentile interval excludes its estimate


def test_bca_contains_its_estimate_exactly_when_the_percentile_interval_does():
    """BCa's ends are the bootstrap quantiles at Phi(z0 + (z0 +- z) / (1 - a (z0 +- z))), the
    estimate is the quantile at Phi(z0): wherever the map is monotone (1 - a (z0 +- z) > 0), the
    BCa interval contains the estimate iff |z0| <= z, iff the percentile interval [Phi(-z), Phi(z)]
    does. Checked on the formula over a grid and on bca_interval itself with resamples placed so
    that the estimate sits at a chosen quantile."""
    from scipy.special import ndtr

    z = 1.959963984540054
    for z0 in np.linspace(-3.5, 3.5, 57):
        for a in np.linspace(-0.2, 0.2, 9):
            w = z0 + np.array([-z, z])
            if np.any(1 - a * w <= 0):
                continue
            low, high = ndtr(z0 + w / (1 - a * w))
            assert (low <= ndtr(z0) <= high) == (abs(z0) <= z) == (ndtr(-z) <= ndtr(z0) <= ndtr(z))
    rng = np.random.default_rng(0)
    boot = np.sort(rng.normal(size=20000))
    jackknife = rng.gamma(2.0, size=50)  # skewed: a about 0.04
    for share in (0.005, 0.02, 0.03, 0.2, 0.5, 0.8, 0.97, 0.98, 0.995):
        value = float(np.quantile(boot, share))
        low, high, method = bca_interval(value, boot, jackknife)
        percentile = np.percentile(boot, [2.5, 97.5])
        assert (low <= value <= high) == (percentile[0] <= value <= percentile[1]), (share, method)


def _tiny_strata(n_strata: int):
    """x, y, strata: n_strata strata of 3 prompts, each with Spearman rho 0.5 (ranks (1, 2, 3) and
    (1, 3, 2)); the pooled within-stratum rho is 0.5 exactly."""
    return np.tile([1.0, 2.0, 3.0], n_strata), np.tile([1.0, 3.0, 2.0], n_strata), np.repeat(np.arange(n_strata), 3)


@pytest.mark.slow
def test_a_percentile_interval_that_excludes_its_estimate_and_why_bca_cannot_fix_it():
    """Resampling 3 prompts within a stratum of 3 duplicates one of them 2 times in 3, and a
    stratum with two distinct prompts has rho +-1: the resamples' pooled within-stratum rho
    averages 0.375 where the estimate is 0.5 (exactly: 1/4 * 0.5 + 1/2 * 1 + 1/4 * -1). With
    200 strata the bootstrap spread (0.058) is well under that bias, so the percentile interval
    lies below 0.5. BCa's z0 is then beyond 1.96 and its far end beyond the extreme resamples, so
    the interval falls back to the percentile one, and says why: no interval from these resamples
    contains the estimate (test above). (Resampling whole strata instead of prompts within them
    would not duplicate prompts inside a stratum; SULA's strata are 5 values of k with 250 prompts
    each, where the bias is negligible: test_sula_confounds.py.)"""
    from geomprobe.analysis.confounds import within_stratum_spearman

    x, y, strata = _tiny_strata(200)
    _, pooled = within_stratum_spearman(x, y, strata, n_perm=9, n_boot=1000, seed=0)
    low, high = pooled["ci95"]
    assert pooled["value"] == pytest.approx(0.5) and high < 0.5  # the percentile interval excludes it
    assert (low + high) / 2 == pytest.approx(0.375, abs=0.03)
    assert "percentile bootstrap" in pooled["method"] and "lies below its estimate" in pooled["note"]
    # with 40 strata the bias (0.125) is within the spread (0.13): both intervals contain 0.5
    x, y, strata = _tiny_strata(40)
    _, pooled = within_stratum_spearman(x, y, strata, n_perm=9, n_boot=1000, seed=0)
    assert pooled["ci95"][0] <= 0.5 <= pooled["ci95"][1] and "note" not in pooled


def test_excludes_estimate_note():
    assert excludes_estimate_note(0.5, 0.2, 0.6) is None and excludes_estimate_note(None, 0.2, 0.6) is None
    assert excludes_estimate_note(0.5, None, None) is None
    assert "lies below its estimate" in excludes_estimate_note(0.5, 0.2, 0.4)
    assert "lies above its estimate" in excludes_estimate_note(0.1, 0.2, 0.4)


def test_grouped_jackknife_and_the_stratified_acceleration():
    """Leave-one-out up to max_groups units, interleaved groups beyond; the stratified BCa of a
    mean over two independently resampled samples equals scipy's two-sample BCa (same resamples)."""
    assert [g.tolist() for g in jackknife_groups(3)] == [[0], [1], [2]]
    groups = jackknife_groups(10, 4)
    assert [g.tolist() for g in groups] == [[0, 4, 8], [1, 5, 9], [2, 6], [3, 7]]
    samples = np.random.default_rng(1).exponential(size=30)
    np.testing.assert_allclose(grouped_jackknife(lambda kept: samples[kept].mean(), 30),
                               (samples.sum() - samples) / 29)
    np.testing.assert_allclose(grouped_jackknife(lambda kept: samples[kept].mean(), 30, 3),
                               [np.delete(samples, g).mean() for g in jackknife_groups(30, 3)])
    rng = np.random.default_rng(2)
    a, b = rng.exponential(size=25), rng.gamma(3.0, size=40)

    def difference(x, y, axis=-1):
        return y.mean(axis=axis) - x.mean(axis=axis)

    result = bootstrap((a, b), difference, n_resamples=2000, method="BCa", vectorized=True,
                       rng=np.random.default_rng(3))
    jackknifes = [b.mean() - (a.sum() - a) / 24, (b.sum() - b) / 39 - a.mean()]
    low, high, method = stratified_bca_interval(difference(a, b), result.bootstrap_distribution, jackknifes)
    assert method == "BCa"
    assert [low, high] == pytest.approx([result.confidence_interval.low, result.confidence_interval.high], rel=1e-9)
