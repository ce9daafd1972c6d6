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
    _leave_out_frobenius,
    _leave_out_moments,
    _OneAtATime,
    _resampled_statistics,
    _RowSpace,
    covariance_eigenvalues,
    gaussian_null,
    leave_one_out_route,
    leave_one_out_statistics,
    shuffle_null,
    spectrum_statistics,
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
    (6, 4, "row space"), (30, 100, "row space"), (21, 20, "row space"), (40, 8, "cross-product, formed"),
    (60, DENSE_SPECTRUM_MAX + 30, "batched"), (120, 30, "batched"), (DENSE_SPECTRUM_MAX + 40, 12, "batched"),
    (200, DENSE_SPECTRUM_MAX + 10, "batched"),
    pytest.param(DENSE_SPECTRUM_MAX + 120, DENSE_SPECTRUM_MAX + 10, "batched", marks=pytest.mark.slow)])
def test_leave_one_out_statistics_equal_refitting_each_sample(n, p, route):
    assert leave_one_out_route(n, p) == route
    z = standardise(_values(np.random.default_rng(n * 1000 + p), n, p))[0]
    fast, direct = leave_one_out_statistics(z), _direct(z)
    assert np.isfinite(direct).all()
    np.testing.assert_allclose(fast, direct, rtol=0, atol=1e-9)


# the one-at-a-time routes on shapes the batched route now takes (they remain its fallback)
@pytest.mark.parametrize("n, p, route", [
    (60, DENSE_SPECTRUM_MAX + 30, "row space"), (120, 30, "cross-product, formed"),
    (40, DENSE_SPECTRUM_MAX + 10, "cross-product, products")])
def test_one_at_a_time_routes_equal_refitting_each_sample(n, p, route):
    z = standardise(_values(np.random.default_rng(n * 1000 + p), n, p))[0]
    one = _OneAtATime(z, route)
    np.testing.assert_allclose(np.stack([one(row) for row in range(n)]), _direct(z), rtol=0, atol=1e-9)


def _hard(kind, n, p, rng):
    """Spectra that are hard for an iterative search, or that need the batched route's fallbacks."""
    if kind == "gaussian":  # i.i.d.: no gap at the top of the spectrum, slow Krylov convergence
        return rng.standard_normal((n, p))
    if kind == "planted rank 3":
        factors = rng.standard_normal((n, 3)) * np.array([6.0, 3.0, 2.0])
        return factors @ rng.standard_normal((3, p)) / np.sqrt(p) * 4 + rng.standard_normal((n, p))
    if kind == "rank deficient":  # rank 6, and rows repeated (prompts ending in the same token)
        matrix = rng.standard_normal((n, 6)) @ rng.standard_normal((6, p))
        matrix[n // 2:] = matrix[:n - n // 2]
        return matrix
    if kind == "constant without one row":  # the `keep` logic: columns dropped by some leave-outs
        return _values(rng, n, p)
    if kind == "outlier row":  # one row dominates every column: the Frobenius expansion cancels
        matrix = rng.standard_normal((n, p))
        matrix[5] *= 30
        return matrix
    raise ValueError(kind)


@pytest.mark.parametrize("kind", ["gaussian", "planted rank 3", "rank deficient", "constant without one row",
                                  "outlier row"])
@pytest.mark.parametrize("n, p", [(90, 160), (160, 60)])  # n < p (n coordinates) and n > p (p + 2)
def test_batched_leave_one_out_equals_refitting_on_hard_spectra(kind, n, p):
    assert leave_one_out_route(n, p) == "batched"
    z = standardise(_hard(kind, n, p, np.random.default_rng(len(kind) * 100 + n)))[0]
    direct = _direct(z)
    assert np.isfinite(direct).all()
    np.testing.assert_allclose(leave_one_out_statistics(z), direct, rtol=0, atol=1e-9)


def test_batched_leave_one_out_falls_back_when_the_search_does_not_settle(monkeypatch):
    """With no search steps allowed, leave-outs not settled by the start fall back to one at a time."""
    from geomprobe.analysis import value_manifold as module

    z = standardise(_hard("gaussian", 70, 90, np.random.default_rng(0)))[0]
    calls = []
    original = module._OneAtATime.__call__
    monkeypatch.setattr(module._OneAtATime, "__call__", lambda self, row: calls.append(row) or original(self, row))
    monkeypatch.setattr(module, "DAVIDSON_STEPS", 0)
    np.testing.assert_allclose(leave_one_out_statistics(z), _direct(z), rtol=0, atol=1e-9)
    assert len(calls) > 35


class _Diagonal:
    """A stand-in for _RowSpace: one leave-out whose matrix is diag(5, 3, 2, 1, 0.5) (no constraint)."""

    lam = np.array([5.0, 3.0, 2.0, 1.0, 0.5])
    size = 5

    def constraint(self, rows):
        return np.zeros((len(rows), self.size))

    def start(self, rows, count=3):
        start = np.zeros((len(rows), count, self.size))
        start[:, 0, 0] = 1.0  # the top eigenvector, exactly; the others vanish (as a constraint can make them)
        return start

    def apply(self, rows, mean, weight, c):
        return c * self.lam

    def correction(self, x, r, theta):
        return -r / (self.lam - theta[:, :, None] + 0.1)


@pytest.mark.parametrize("steps", [0, 3])
def test_batched_search_never_settles_on_a_zero_direction(steps, monkeypatch):
    """Vanished start vectors leave zero columns in the search space, whose Ritz pairs (0, 0) have no
    residual: with the top pair settled from the start, the second must not be taken from them (5, 0):
    the leave-out stays unsettled, for the one-at-a-time fallback."""
    from geomprobe.analysis import value_manifold as module

    monkeypatch.setattr(module, "DAVIDSON_STEPS", steps)
    top = module._top_two_batched(_Diagonal(), np.array([0]), np.zeros((1, 1)), np.ones((1, 1)), np.array([1e-9]))
    assert np.isnan(top).all()


def test_outlier_row_pr_comes_from_one_at_a_time():
    """Without the row that dominates every column, G - a a' cancels: its Frobenius norm is re-computed."""
    z = standardise(_hard("outlier row", 70, 90, np.random.default_rng(1)))[0]
    _, growth = _leave_out_frobenius(z, None, z.sum(axis=0), (z * z).sum(axis=0))
    assert growth[5] > 100 and np.delete(growth, 5).max() < 2


@pytest.mark.parametrize("n, p", [(30, 50), (50, 12)])
def test_row_space_coordinates_hold_each_leave_out_covariance(n, p):
    """M_i in _RowSpace's coordinates, restricted to vectors orthogonal to e_i, has the leave-out's spectrum."""
    z = standardise(_values(np.random.default_rng(n + p), n, p))[0]
    space = _RowSpace(z)
    s1, s2 = z.sum(axis=0), (z * z).sum(axis=0)
    for row in (0, 7, n - 1):
        mean, var = _leave_out_moments(z, s1, s2, [row])
        keep = var > 1e-10
        weight = np.where(keep, 1.0 / np.where(keep, var, 1.0), 0.0)
        identity = np.eye(space.size)[None]
        matrix = space.apply(np.array([row]), mean, weight, identity)[0].T
        g = space.constraint(np.array([row]))[0]
        projection = np.eye(space.size) - np.outer(g, g)
        matrix = projection @ matrix @ projection
        np.testing.assert_allclose(matrix, matrix.T, atol=1e-10 * np.abs(matrix).max())
        eig = np.clip(np.linalg.eigvalsh(0.5 * (matrix + matrix.T))[::-1], 0.0, None)
        others = np.delete(np.arange(n), row)
        scaled = (z[np.ix_(others, keep[0])] - mean[0, keep[0]]) / np.sqrt(var[0, keep[0]])
        exact = covariance_eigenvalues(scaled)
        np.testing.assert_allclose(eig[:len(exact)], exact, rtol=0, atol=1e-10 * exact[0])


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["gaussian", "planted rank 3"])
def test_batched_leave_one_out_at_the_suites_shape(kind):
    """400 prompts x 1,024 columns (Pythia-410M's values), as the geometry suite's profile has them."""
    z = standardise(_hard(kind, 400, 1024, np.random.default_rng(4)))[0]
    assert leave_one_out_route(*z.shape) == "batched"
    rows = np.arange(0, 400, 9)
    direct = np.stack([_resampled_statistics(z, np.delete(np.arange(400), row)) for row in rows])
    np.testing.assert_allclose(leave_one_out_statistics(z)[rows], direct, rtol=0, atol=1e-9)


def _old_shuffle_null(z, n_null, seed):
    """shuffle_null as it was (C-order copies, the whole spectrum of each draw)."""
    from geomprobe.analysis.value_manifold import _null_summary, _ratios

    rng = np.random.default_rng(seed)
    draws, spectra = [], []
    for _ in range(n_null):
        eig = covariance_eigenvalues(rng.permuted(z, axis=0))
        draws.append(spectrum_statistics(eig))
        spectra.append(_ratios(eig))
    return _null_summary(draws, spectra, "shuffle", z.shape)


def _assert_same_summary(new, old, atol=1e-12):
    for name in ("pc1", "pc12", "pr"):
        np.testing.assert_allclose([new[name][k] for k in ("median", "low", "high")],
                                   [old[name][k] for k in ("median", "low", "high")], rtol=0, atol=atol)
    np.testing.assert_allclose(new["spectrum_median"], old["spectrum_median"], rtol=0, atol=atol)
    assert (new["n_draws"], new["shape"]) == (old["n_draws"], old["shape"])


@pytest.mark.parametrize("n, p", [(40, 70), (90, 30)])
def test_shuffle_null_draws_the_same_permutations(n, p, monkeypatch):
    """The permutations, drawn once per shape and seed as index arrays (up to SHUFFLE_CACHE_BYTES, then
    directly), are those rng.permuted draws: for this matrix, another of its shape, more or fewer draws."""
    from geomprobe.analysis import value_manifold as module

    monkeypatch.setattr(module, "SHUFFLE_CACHE_BYTES", 12 * n * p * 2)  # room for 12 draws of int16 indices
    module._SHUFFLES.clear()
    rng = np.random.default_rng(n)
    first, second = (standardise(_values(rng, n, p))[0] for _ in range(2))
    seed = np.random.SeedSequence(7).spawn(3)[2]
    for z, n_null in ((first, 25), (second, 10), (second, 30), (first, 25)):
        _assert_same_summary(shuffle_null(z, n_null, seed=seed), _old_shuffle_null(z, n_null, seed))
    assert len(module._SHUFFLES[(n, p, module._seed_key(seed))]["indices"]) == 12
    _assert_same_summary(shuffle_null(first, 25, seed=3), _old_shuffle_null(first, 25, 3))


def test_gaussian_null_with_fewer_draws_is_the_first_of_the_same_stream():
    from geomprobe.analysis import value_manifold as module

    seed = np.random.SeedSequence(9).spawn(3)[1]
    for n_null in (12, 30, 7):  # drawn, extended, and read from the draws made
        assert gaussian_null(20, 9, n_null, seed=seed) == module._draw_gaussian_null(20, 9, n_null, seed)


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
