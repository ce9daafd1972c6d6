"""The fast leave-out computations give the intervals the direct ones give (to 1e-9): the value
manifold's jackknife from one cross-product (leave_one_out_statistics), the Gaussian null drawn once
per shape, and the sula statistics' grouped jackknifes evaluated on every group at once
(grouped_jackknife_rows). The references below re-fit each leave-out sample on its own, as the
package did before these were made fast."""

import numpy as np
import pytest
from scipy.stats import rankdata

from geomprobe.analysis import confounds, sula_metrics
from geomprobe.analysis.bootstrap import grouped_jackknife, grouped_jackknife_rows, jackknife_groups, jackknife_interval
from geomprobe.analysis.confounds import _codes, _partial_r, _rowwise_pearson, _varies, tie_ranks
from geomprobe.analysis.pca import standardise
from geomprobe.analysis.value_manifold import (
    DENSE_SPECTRUM_MAX,
    _resampled_statistics,
    gaussian_null,
    leave_one_out_route,
    leave_one_out_statistics,
    value_manifold,
)


def _values(rng, n, p, constant_column=True):
    """A spiked matrix with a column constant but for three rows (leaving one of them out keeps it
    varying, and a column constant but for one row, which some leave-outs drop)."""
    matrix = rng.standard_normal((n, p)) + 0.3 * rng.standard_normal((n, 1))
    matrix[:, 0] *= 5
    matrix[:, 1] += matrix[:, 0]
    if constant_column:
        matrix[:, 2] = 0.0
        matrix[:3, 2] = 1.0
        matrix[:, 3] = 0.0
        matrix[min(7, n - 1), 3] = 2.0
    return matrix


def _direct(z):
    rows = np.arange(z.shape[0])
    return np.stack([_resampled_statistics(z, np.delete(rows, row)) for row in rows])


# every route leave_one_out_statistics can take (leave_one_out_route), with small and large spectra
@pytest.mark.parametrize("n, p, route", [
    (6, 4, "row space"), (30, 100, "row space"), (21, 20, "row space"), (60, DENSE_SPECTRUM_MAX + 30, "row space"),
    (40, 8, "cross-product, formed"), (120, 30, "cross-product, formed"),
    (DENSE_SPECTRUM_MAX + 40, 12, "cross-product, formed"),
    (200, DENSE_SPECTRUM_MAX + 10, "cross-product, products"),
    pytest.param(DENSE_SPECTRUM_MAX + 120, DENSE_SPECTRUM_MAX + 10, "cross-product, products",
                 marks=pytest.mark.slow)])
def test_leave_one_out_statistics_equal_refitting_each_sample(n, p, route):
    assert leave_one_out_route(n, p) == route
    z = standardise(_values(np.random.default_rng(n * 1000 + p), n, p))[0]
    fast, direct = leave_one_out_statistics(z), _direct(z)
    assert np.isfinite(direct).all()
    np.testing.assert_allclose(fast, direct, rtol=0, atol=1e-9)


def test_leave_one_out_drops_a_column_only_its_row_varies():
    """Without row 7 column 3 is constant: that leave-out has one column fewer, as re-fitting gives."""
    z = standardise(_values(np.random.default_rng(3), 50, 10))[0]
    without_seven = _resampled_statistics(z, np.delete(np.arange(50), 7))
    np.testing.assert_allclose(leave_one_out_statistics(z)[7], without_seven, atol=1e-12)
    assert leave_one_out_statistics(z)[7][0] != pytest.approx(leave_one_out_statistics(z)[8][0], abs=1e-6)


def test_value_manifold_jackknife_intervals_equal_the_direct_ones():
    matrix = _values(np.random.default_rng(11), 90, 24)
    vm = value_manifold(matrix, n_null=5, ci="jackknife")
    z = standardise(matrix)[0]
    direct = _direct(z)
    for column, name in enumerate(("pc1", "pc12", "pr")):
        low, high, method = jackknife_interval(getattr(vm, name), direct[:, column])
        assert method == "jackknife" == vm.ci_method[name]
        np.testing.assert_allclose(getattr(vm, f"{name}_ci95"), [low, high], rtol=0, atol=1e-9)


def test_gaussian_null_once_per_shape_is_the_same_draw_and_not_shared_state():
    child = np.random.SeedSequence(5).spawn(3)[1]
    first = gaussian_null(30, 12, 20, seed=child)
    first["pc1"]["median"] = -1.0  # a caller changing its copy changes nothing cached
    again = gaussian_null(30, 12, 20, seed=np.random.SeedSequence(5).spawn(3)[1])
    other_child = gaussian_null(30, 12, 20, seed=np.random.SeedSequence(5).spawn(3)[2])
    assert again["pc1"]["median"] > 0
    assert again["pc1"] != other_child["pc1"]
    assert gaussian_null(30, 12, 20, seed=1)["pc1"] != gaussian_null(30, 12, 20, seed=2)["pc1"]
    # the cached draw is the one drawn fresh: a different n_null starts its own stream from the same seed
    from geomprobe.analysis import value_manifold as module

    fresh = module._draw_gaussian_null(30, 12, 20, np.random.SeedSequence(5).spawn(3)[1])
    assert fresh == again


def test_grouped_jackknife_rows_equals_the_scalar_jackknife_with_groups_of_two_sizes():
    samples = np.random.default_rng(0).exponential(size=257)  # 100 groups of sizes 3 and 2
    assert {len(g) for g in jackknife_groups(257)} == {2, 3}
    np.testing.assert_array_equal(grouped_jackknife_rows(lambda kept: samples[kept].mean(axis=1), 257),
                                  grouped_jackknife(lambda kept: samples[kept].mean(), 257))


def _sula_like(n_per_k=60, seed=0):
    rng = np.random.default_rng(seed)
    k = np.repeat([0, 2, 4, 6, 8], n_per_k)
    h_bayes = np.round(1.0 / (1 + k) + 0.02 * rng.integers(0, 4, len(k)), 3)  # ties, as H_bayes has
    pc1 = rng.standard_normal(len(k)) + 0.3 * k - 2.0 * h_bayes
    n_tokens = rng.integers(10, 40, len(k)).astype(float)
    return k, h_bayes, pc1, n_tokens


def _old_partial_jackknife(x, y, covs, strata):
    """The package's leave-out statistic before batching: one sample at a time, levels re-coded."""
    codes = None if strata is None else _codes(strata)

    def left_out(kept):
        ranks = [tie_ranks(c[kept]) for c in covs]
        kept_cov = np.stack(ranks, axis=-1) if ranks else np.zeros((len(kept), 0))
        return float(_partial_r(tie_ranks(x[kept]), tie_ranks(y[kept]), kept_cov,
                                None if codes is None else _codes(codes[kept])))

    return grouped_jackknife(left_out, len(x))


@pytest.mark.parametrize("n_per_k", [12, 60])  # leave-one-out (60 prompts) and 100 groups (300)
def test_rank_partial_correlation_interval_unchanged(n_per_k, monkeypatch):
    k, h_bayes, pc1, n_tokens = _sula_like(n_per_k)
    fast = confounds.rank_partial_correlation(pc1, h_bayes, [n_tokens], strata=k, n_boot=300, seed=4)
    captured = {}
    original = confounds.stratified_bca_interval

    def capture(value, boot, jackknifes, *args):
        captured["jackknife"] = jackknifes[0]
        return original(value, boot, jackknifes, *args)

    monkeypatch.setattr(confounds, "stratified_bca_interval", capture)
    confounds.rank_partial_correlation(pc1, h_bayes, [n_tokens], strata=k, n_boot=300, seed=4)
    old = _old_partial_jackknife(pc1, h_bayes, [n_tokens], k)
    np.testing.assert_allclose(captured["jackknife"], old, rtol=0, atol=1e-9)
    monkeypatch.setattr(confounds, "grouped_jackknife_rows",
                        lambda statistic, n, max_groups=100: _old_partial_jackknife(pc1, h_bayes, [n_tokens], k))
    reference = confounds.rank_partial_correlation(pc1, h_bayes, [n_tokens], strata=k, n_boot=300, seed=4)
    np.testing.assert_allclose(fast["ci95"], reference["ci95"], rtol=0, atol=1e-9)
    assert fast["method"] == reference["method"]


def _old_stratum_jackknife(x, y, n_groups):
    def rho(kept):
        if len(kept) < 3 or not (_varies(x[kept]) and _varies(y[kept])):
            return np.nan
        return float(_rowwise_pearson(tie_ranks(x[kept])[None], tie_ranks(y[kept])[None])[0])

    return grouped_jackknife(rho, len(x), n_groups)


def test_within_stratum_jackknife_unchanged_with_ties_and_tiny_strata():
    rng = np.random.default_rng(2)
    for x, y, groups in [(rng.standard_normal(50), np.round(rng.random(50), 1), 10),
                         (rng.standard_normal(4), np.array([1.0, 1.0, 1.0, 2.0]), 10),  # a side tied once one is out
                         (rng.standard_normal(3), rng.standard_normal(3), 10)]:        # 2 left: undefined
        np.testing.assert_allclose(confounds._stratum_jackknife(x, y, groups), _old_stratum_jackknife(x, y, groups),
                                   rtol=0, atol=1e-9)
    assert np.isnan(confounds._stratum_jackknife(rng.standard_normal(3), rng.standard_normal(3), 10)).all()


def test_correlation_jackknife_unchanged():
    k, h_bayes, pc1, _ = _sula_like(40)
    for method in ("spearman", "pearson"):
        def old(kept, method=method):
            x, y = pc1[kept], h_bayes[kept]
            if method == "spearman":
                x, y = rankdata(x), rankdata(y)
            return float(_rowwise_pearson(x[None], y[None])[0])

        fast = grouped_jackknife_rows(lambda kept, m=method: sula_metrics._correlation_values(pc1[kept], h_bayes[kept], m),
                                      len(pc1))
        np.testing.assert_allclose(fast, grouped_jackknife(old, len(pc1)), rtol=0, atol=1e-12)
