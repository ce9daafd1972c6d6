"""Known-answer tests for the geometry statistics (METHODS.md sections 2-5): numpy/scipy only, fast."""

import json
import math

import numpy as np
import pytest
from scipy.stats import spearmanr
from sklearn.decomposition import PCA
from threadpoolctl import threadpool_limits

from geomprobe.analysis.bootstrap import bootstrap_mean_ci
from geomprobe.analysis.focusing import attention_focusing
from geomprobe.analysis.key_orthogonality import (
    analytic_gaussian,
    empirical_gaussian,
    fold_ln,
    key_orthogonality,
    orth_statistic,
    token_key_orth,
)
from geomprobe.analysis.pca import explained_variance_ratios, standardise
from geomprobe.analysis.value_manifold import (
    covariance_eigenvalues,
    cross_model_basis,
    layer_profile,
    resample_eigenvalues,
    ungroup,
    value_manifold,
)
from geomprobe.analysis.verdict import VerdictThresholds, verdict
from geomprobe.analysis.windtunnel_metrics import entropy_bits
from geomprobe.errors import NumericalError

FAST = {"n_boot": 50, "n_null": 40}


@pytest.fixture(autouse=True)
def single_blas_thread():
    # Small matrices gain nothing from BLAS threads, and on a busy machine threads oversubscribe badly.
    with threadpool_limits(1):
        yield


def rank_one(n, p, noise, seed=0):
    rng = np.random.default_rng(seed)
    latent = rng.standard_normal(n)
    loading = rng.uniform(0.5, 1.5, p) * rng.choice([-1, 1], p)
    return np.outer(latent, loading) + noise * rng.standard_normal((n, p)), latent


def assert_json_ready(result):
    json.dumps(result.to_dict(), allow_nan=False)


# --- value manifold ------------------------------------------------------------------------------

def test_rank_one_gives_pc1_and_pr_near_one():
    matrix, _ = rank_one(60, 40, noise=0.01)
    vm = value_manifold(matrix, **FAST)
    assert vm.pc1 > 0.999 and vm.pc12 > 0.999
    assert 1.0 <= vm.pr < 1.01
    assert vm.pc1_ci95[0] <= vm.pc1 <= vm.pc1_ci95[1] + 1e-12
    assert vm.above_shuffle_null == {"pc1": True, "pc12": True}
    assert len(vm.spectrum) == 20 and vm.spectrum[0] == pytest.approx(vm.pc1)
    assert_json_ready(vm)
    assert "pc1_coords" in vm.to_dict() and "pc1_coords" not in vm.to_dict(compact=True)


@pytest.mark.slow
def test_isotropic_gaussian_with_many_prompts_gives_pc1_near_one_over_p():
    p = 10
    matrix = np.random.default_rng(1).standard_normal((4000, p))
    vm = value_manifold(matrix, n_boot=10, n_null=10)
    assert vm.pc1 == pytest.approx(1 / p, abs=0.02)
    assert vm.pr > 0.95 * p
    assert not vm.above_shuffle_null["pc1"]


@pytest.mark.parametrize("shape", [(30, 50), (50, 8)])  # Gram path (p > n) and covariance path
def test_ratios_match_sklearn_pca_on_standardised_matrix(shape):
    rng = np.random.default_rng(2)
    matrix = rng.standard_normal(shape) @ rng.standard_normal((shape[1], shape[1]))
    vm = value_manifold(matrix, n_boot=5, n_null=5)
    ratios = PCA().fit(standardise(matrix)[0]).explained_variance_ratio_
    assert vm.pc1 == pytest.approx(ratios[0], rel=1e-9)
    assert vm.pc12 == pytest.approx(ratios[:2].sum(), rel=1e-9)
    assert vm.pr == pytest.approx(1 / (ratios**2).sum(), rel=1e-9)
    np.testing.assert_allclose(vm.spectrum, ratios[:20], rtol=1e-9, atol=1e-12)


def test_gaussian_null_median_agrees_with_direct_simulation():
    n, p = 20, 30
    vm = value_manifold(np.random.default_rng(3).standard_normal((n, p)), n_boot=5, n_null=200)
    rng = np.random.default_rng(99)
    direct = np.median([explained_variance_ratios(rng.standard_normal((n, p)))[0] for _ in range(400)])
    null = vm.gaussian_null["pc1"]
    assert null["median"] == pytest.approx(direct, abs=0.01)
    assert null["low"] < null["median"] < null["high"]
    assert null["median"] > 3 / p  # with n < p the null PC1 is far above 1/p (METHODS.md 2.4)
    assert vm.gaussian_null["shape"] == [n, p]


def test_shuffle_null_destroys_a_planted_correlation():
    matrix, _ = rank_one(40, 30, noise=0.5, seed=4)
    vm = value_manifold(matrix, n_boot=5, n_null=100)
    assert vm.pc1 > 0.6
    assert vm.shuffle_null["pc1"]["high"] < 0.25
    assert vm.shuffle_null["pc1"]["median"] == pytest.approx(vm.gaussian_null["pc1"]["median"], abs=0.02)
    assert vm.above_shuffle_null["pc1"] and vm.above_shuffle_null["pc12"]


def test_fast_resample_equals_restandardising_the_resample():
    rng = np.random.default_rng(21)
    matrix = rng.standard_normal((12, 30)) * rng.uniform(0.1, 10, 30) + rng.uniform(-5, 5, 30)
    matrix[:, 0] = 0.0
    matrix[0, 0] = 1.0  # varies only through prompt 0: constant in resamples without it
    z, _ = standardise(matrix)
    for rows in [rng.integers(0, 12, 12) for _ in range(20)] + [np.array([1, 1, 2, 3, 3, 3, 4, 5, 6, 7, 8, 9])]:
        reference = covariance_eigenvalues(standardise(matrix[rows])[0])
        fast = resample_eigenvalues(z, rows)
        np.testing.assert_allclose(fast[:5] / fast.sum(), reference[:5] / reference.sum(), rtol=1e-9, atol=1e-12)
    assert resample_eigenvalues(z, np.full(12, 4)) is None  # one prompt drawn 12 times


def test_bootstrap_is_seeded():
    matrix, _ = rank_one(30, 20, noise=1.0, seed=5)
    a, b = value_manifold(matrix, seed=7, **FAST), value_manifold(matrix, seed=7, **FAST)
    c = value_manifold(matrix, seed=8, **FAST)
    assert a.pc1_ci95 == b.pc1_ci95 and a.shuffle_null == b.shuffle_null
    assert a.pc1_ci95 != c.pc1_ci95


@pytest.mark.parametrize("entropy_sign", [1, -1])
def test_rho_with_planted_entropy_and_orientation(entropy_sign):
    matrix, latent = rank_one(50, 20, noise=1e-4, seed=6)
    entropy = entropy_sign * (latent + 0.7 * np.random.default_rng(7).standard_normal(50))
    true_rho = spearmanr(latent, entropy)[0]
    vm = value_manifold(matrix, entropy_bits=entropy, n_boot=5, n_null=5)
    assert abs(vm.rho_pc1_entropy_raw) == pytest.approx(abs(true_rho), abs=1e-12)
    assert vm.rho_pc1_entropy == vm.abs_rho_pc1_entropy == pytest.approx(abs(true_rho), abs=1e-12)
    assert spearmanr(vm.pc1_coords, entropy)[0] == pytest.approx(abs(true_rho), abs=1e-12)
    assert spearmanr(vm.pc1_coords, latent)[0] == pytest.approx(np.sign(true_rho), abs=1e-12)
    assert len(vm.pc2_coords) == 50


def test_rho_sign_flip_is_recorded():
    matrix, latent = rank_one(40, 10, noise=1e-4, seed=8)
    up = value_manifold(matrix, entropy_bits=latent, n_boot=5, n_null=5)
    down = value_manifold(matrix, entropy_bits=-latent, n_boot=5, n_null=5)
    assert up.rho_pc1_entropy_raw == pytest.approx(-down.rho_pc1_entropy_raw)
    assert up.rho_pc1_entropy == pytest.approx(1.0) and down.rho_pc1_entropy == pytest.approx(1.0)
    np.testing.assert_allclose(up.pc1_coords, -np.asarray(down.pc1_coords))
    assert "flipped" in (up.pc1_sign + down.pc1_sign)


def test_ungroup_repeats_kv_heads_and_keeps_ratios():
    rng = np.random.default_rng(9)
    values = rng.standard_normal((25, 2, 3)) + rng.standard_normal((25, 1, 1))  # [n, G=2, d=3], correlated
    ungrouped = ungroup(values, n_heads=6)
    assert ungrouped.shape == (25, 6, 3)
    for head in range(6):
        np.testing.assert_array_equal(ungrouped[:, head], values[:, head // 3])
    grouped_ratios = explained_variance_ratios(values.reshape(25, -1))
    ungrouped_ratios = explained_variance_ratios(ungrouped.reshape(25, -1))
    np.testing.assert_allclose(ungrouped_ratios[:6], grouped_ratios, rtol=1e-9)
    np.testing.assert_allclose(ungrouped_ratios[6:], 0, atol=1e-12)
    with pytest.raises(ValueError, match="multiple"):
        ungroup(values, n_heads=5)


def test_layer_profile_one_result_per_layer():
    rng = np.random.default_rng(10)
    values = rng.standard_normal((20, 3, 2, 4))  # [n, L, G, d]
    values[:, 1] += rng.standard_normal((20, 1, 1)) * 5  # a strongly one-dimensional layer
    profile = layer_profile(values, n_boot=5, n_null=5)
    assert len(profile) == 3
    assert profile[1].pc1 > 0.8 > profile[0].pc1
    assert profile[2].pc1 == pytest.approx(explained_variance_ratios(values[:, 2].reshape(20, -1))[0])
    resid = layer_profile(rng.standard_normal((20, 2, 6)), n_boot=5, n_null=5)  # [n, L, D]
    assert len(resid) == 2 and resid[0].n_columns == 6


def test_zero_variance_columns_are_dropped_and_counted():
    matrix, _ = rank_one(30, 8, noise=1.0, seed=11)
    padded = np.concatenate([matrix, np.full((30, 2), 3.0)], axis=1)
    vm, ref = value_manifold(padded, n_boot=5, n_null=5), value_manifold(matrix, n_boot=5, n_null=5)
    assert vm.n_dropped_columns == 2 and vm.n_columns == 10 and ref.n_dropped_columns == 0
    assert vm.pc1 == pytest.approx(ref.pc1)
    assert vm.gaussian_null["shape"] == [30, 8]


def test_bad_inputs_raise_clear_errors():
    matrix, _ = rank_one(10, 5, noise=1.0)
    bad = matrix.copy()
    bad[3, 2] = np.nan
    with pytest.raises(NumericalError, match="NaN in activations"):
        value_manifold(bad)
    bad[3, 2] = np.inf
    with pytest.raises(NumericalError, match="NaN in activations"):
        value_manifold(bad)
    with pytest.raises(ValueError, match="at least 3 prompts"):
        value_manifold(matrix[:2])
    with pytest.raises(ValueError, match="zero variance"):
        value_manifold(np.ones((10, 4)))
    with pytest.raises(ValueError, match="entropy_bits has 9 values"):
        value_manifold(matrix, entropy_bits=np.zeros(9))


def test_cross_model_basis():
    matrix, latent = rank_one(40, 12, noise=0.05, seed=12)
    noise = np.random.default_rng(13).standard_normal((40, 12))
    basis = cross_model_basis({"signal": matrix, "noise": noise}, entropy_bits=latent)
    assert basis.pc1_loading_share["signal"] > 0.95
    assert sum(basis.pc1_loading_share.values()) == pytest.approx(1.0)
    assert basis.rho_pc1_entropy > 0.99
    same = cross_model_basis({"a": matrix, "b": matrix * 10 + 1})  # separate standardisation
    assert same.pc1_loading_share == pytest.approx({"a": 0.5, "b": 0.5})
    assert same.pc1 == pytest.approx(explained_variance_ratios(matrix)[0])
    with pytest.raises(ValueError, match="share prompts"):
        cross_model_basis({"a": matrix, "b": matrix[:30]})
    assert_json_ready(basis)


# --- key orthogonality ---------------------------------------------------------------------------

def test_orth_statistic_known_answers():
    basis = np.linalg.qr(np.random.default_rng(14).standard_normal((16, 5)))[0]
    assert orth_statistic(basis) == pytest.approx(0.0, abs=1e-12)
    v = np.random.default_rng(15).standard_normal(16)
    assert orth_statistic(np.stack([v, 2 * v, -3 * v], axis=1)) == pytest.approx(1.0)
    assert orth_statistic(np.array([[1.0, 1.0], [0.0, 1.0]])) == pytest.approx(1 / math.sqrt(2))
    # columns e1, e1+e2, e2: |cos| = 1/sqrt2, 0, 1/sqrt2 -> 2 * sqrt2 / (3 * 2)
    assert orth_statistic(np.array([[1.0, 1.0, 0.0], [0.0, 1.0, 1.0]])) == pytest.approx(math.sqrt(2) / 3)
    stack = np.random.default_rng(16).standard_normal((2, 3, 8, 4))
    np.testing.assert_allclose(orth_statistic(stack), [[orth_statistic(w) for w in row] for row in stack])
    keys = np.random.default_rng(17).standard_normal((3, 10, 4))  # [heads, tokens, d_head]
    token = token_key_orth(keys)
    np.testing.assert_allclose(token.per_head, [orth_statistic(k.T) for k in keys])
    assert token.mean == pytest.approx(np.mean(token.per_head)) and token.d_head == 4
    assert token.analytic_gaussian == analytic_gaussian(4) and token.n_tokens == 10
    with pytest.raises(ValueError, match="zeros"):
        orth_statistic(np.array([[1.0, 0.0], [0.0, 0.0]]))


@pytest.mark.slow
def test_analytic_gaussian_exact_monte_carlo_and_asymptotic():
    assert analytic_gaussian(2) == pytest.approx(2 / math.pi)  # |cos| of a uniform angle
    assert analytic_gaussian(3) == pytest.approx(0.5)  # cos uniform on [-1, 1] in R^3
    rng = np.random.default_rng(18)
    a, b = rng.standard_normal((2, 100_000, 50))
    cos = np.abs((a * b).sum(-1)) / np.linalg.norm(a, axis=-1) / np.linalg.norm(b, axis=-1)
    assert cos.mean() == pytest.approx(analytic_gaussian(50), rel=0.02)
    assert round(analytic_gaussian(1024), 3) == 0.025
    assert analytic_gaussian(1024) == pytest.approx(math.sqrt(2 / (math.pi * 1024)), rel=1e-3)
    assert math.isfinite(analytic_gaussian(10**7))


def test_empirical_gaussian_matches_analytic():
    result = empirical_gaussian(D=64, d=16, n_heads=4, n_draws=5, seed=0)
    assert result["mean"] == pytest.approx(analytic_gaussian(64), rel=0.03)
    assert result["p10"] < result["p50"] < result["p90"]


def test_key_orthogonality_layers_fraction_and_baselines():
    rng = np.random.default_rng(19)
    orthonormal = np.stack([np.linalg.qr(rng.standard_normal((32, 4)))[0] for _ in range(3)])
    collinear = np.repeat(rng.standard_normal((3, 32, 1)), 4, axis=2)
    ko = key_orthogonality([orthonormal, collinear, orthonormal], baselines={
        "init": [[0.1, 0.2, 0.3], [0.3, 0.4, 0.5]], "step0": [0.15, 0.15, 0.25]})
    np.testing.assert_allclose(ko.layer_mean, [0, 1, 0], atol=1e-12)
    assert ko.fraction_below == pytest.approx(2 / 3) and ko.n_layers_below == 2
    assert len(ko.per_head[1]) == 3 and ko.layer_p90[1] == pytest.approx(1.0)
    assert ko.analytic_gaussian == analytic_gaussian(32) and ko.vector_dim == 32 and ko.n_vectors == 4
    assert ko.empirical_gaussian["n_heads"] == 3
    init = ko.baselines["init"]
    assert init["n_seeds"] == 2 and init["mean"] == pytest.approx(0.3)
    np.testing.assert_allclose(init["layer_mean"], [0.2, 0.3, 0.4])
    np.testing.assert_allclose(init["layer_min"], [0.1, 0.2, 0.3])
    np.testing.assert_allclose(init["layer_max"], [0.3, 0.4, 0.5])
    assert ko.baselines["step0"]["fraction_below"] == pytest.approx(2 / 3)
    assert key_orthogonality([orthonormal, collinear], threshold=1.5).fraction_below == 1.0
    # baselines given as key weights: one model (list over layers) or seeds (list of such lists),
    # with their own number of layers
    weighted = key_orthogonality([orthonormal], baselines={"step0": [collinear, orthonormal],
                                                           "init": [[orthonormal], [collinear]]})
    assert weighted.baselines["step0"]["layer_mean"] == pytest.approx([1.0, 0.0])
    assert weighted.baselines["init"]["n_seeds"] == 2 and weighted.baselines["init"]["n_layers"] == 1
    assert weighted.baselines["init"]["layer_mean"] == pytest.approx([0.5])
    assert weighted.baselines["init"]["layer_max"] == pytest.approx([1.0])
    assert_json_ready(ko)
    tokens = key_orthogonality([rng.standard_normal((2, 10, 8))], mode="token_keys")
    assert tokens.vector_dim == 8 and tokens.n_vectors == 10 and tokens.analytic_gaussian == analytic_gaussian(8)


def test_fold_ln_scales_rows():
    rng = np.random.default_rng(20)
    w_k, gamma = rng.standard_normal((6, 3)), rng.uniform(0.5, 2, 6)
    np.testing.assert_allclose(fold_ln(w_k, gamma), np.diag(gamma) @ w_k)
    with pytest.raises(ValueError, match="rows"):
        fold_ln(w_k, gamma[:5])


# --- attention focusing --------------------------------------------------------------------------

def planted_entropies(layer_means, n_prompts=6, n_heads=4):
    head_offsets = np.array([0.5, -0.5, 0.25, -0.25])[:n_heads]  # sum to zero over heads
    prompt_offsets = np.linspace(-0.1, 0.1, n_prompts)  # sum to zero over prompts
    return (np.asarray(layer_means)[None, :, None] + head_offsets[None, None, :]
            + prompt_offsets[:, None, None])


def test_focusing_on_planted_entropies():
    entropy = planted_entropies([4.0, 3.0, 2.0, 1.0])
    visible = np.full((6, 4), 16)
    af = attention_focusing(entropy, visible, n_boot=200, seed=3)
    np.testing.assert_allclose(af.hbar_bits, [4, 3, 2, 1])
    np.testing.assert_allclose(af.reduction, [0, 0.25, 0.5, 0.75])
    assert af.focusing == pytest.approx(0.75)
    assert af.focusing_ci95[0] <= 0.75 <= af.focusing_ci95[1]
    assert af.largest_reduction == pytest.approx(0.75) and af.largest_reduction_layer == 3
    assert af.monotonicity == pytest.approx(-1.0)
    np.testing.assert_allclose(af.normalised["hbar"], [1, 0.75, 0.5, 0.25])
    assert af.normalised["focusing"] == pytest.approx(0.75)
    for layer in range(4):  # same resamples as bootstrap_mean_ci with the same seed
        _, low, high = bootstrap_mean_ci(entropy[:, layer].mean(axis=1), n_boot=200, seed=3)
        assert af.hbar_bits_ci95[layer] == pytest.approx([low, high])
    assert_json_ready(af)


def test_focusing_non_monotone_profile():
    af = attention_focusing(planted_entropies([4.0, 1.0, 2.0, 3.0]), np.full((6, 4), 16), n_boot=50)
    assert af.focusing == pytest.approx(0.25)
    assert af.largest_reduction == pytest.approx(0.75) and af.largest_reduction_layer == 1
    assert af.monotonicity == pytest.approx(spearmanr([0, 1, 2, 3], [4, 1, 2, 3])[0])


def test_focusing_uses_per_head_entropies_not_averaged_distributions():
    uniform = np.full(4, 0.25)
    one_hot_a, one_hot_b = np.eye(4)[0], np.eye(4)[1]
    layer0 = [uniform, uniform]
    layer1 = [one_hot_a, one_hot_b]  # each head certain, but on different keys
    per_head = np.array([[entropy_bits(np.stack(layer0)), entropy_bits(np.stack(layer1))]] * 3)  # [n, L, H]
    af = attention_focusing(per_head, np.full((3, 2), 4), n_boot=20)
    assert af.hbar_bits == pytest.approx([2.0, 0.0])
    assert entropy_bits(np.mean(layer1, axis=0)) == pytest.approx(1.0)  # what averaging would give
    assert af.focusing == pytest.approx(1.0)  # not 1 - 1/2


def test_normalised_entropy_excludes_single_key_prompts():
    entropy = planted_entropies([4.0, 3.0, 2.0, 1.0])
    visible = np.full((6, 4), 16)
    visible[0, 2] = 1  # this prompt's final token sees one key at layer 2
    af = attention_focusing(entropy, visible, n_boot=50)
    assert af.n_excluded_normalised == 1
    expected = entropy[1:, 2].mean() / 4
    assert af.normalised["hbar"][2] == pytest.approx(expected)
    assert all(v is not None for v in af.normalised["hbar"])
    assert af.hbar_bits[2] == pytest.approx(2.0)  # the raw statistic keeps the prompt


def test_focusing_errors():
    with pytest.raises(ValueError, match="layer-0 mean attention entropy is 0"):
        attention_focusing(np.zeros((3, 2, 2)), np.full((3, 2), 5))
    with pytest.raises(ValueError, match="n_visible_keys"):
        attention_focusing(np.ones((3, 2, 2)), np.full((3, 3), 5))
    bad = np.ones((3, 2, 2))
    bad[1, 1, 0] = np.nan
    with pytest.raises(NumericalError):
        attention_focusing(bad, np.full((3, 2), 5))


# --- verdict -------------------------------------------------------------------------------------

def test_verdict_labels_and_boundaries():
    assert verdict(0.31, 0.5, True, 0.5, 0.31).label == "full"
    at_thresholds = verdict(0.30, 0.30, True, 0.5, 0.30)  # strict > except "at least" 50% of layers
    assert (at_thresholds.n_met, at_thresholds.label) == (1, "absent")
    assert at_thresholds.keys["met"] and not at_thresholds.value_manifold["met"]
    assert verdict(0.1, 0.62, True, 0.49, 0.82).label == "partial"
    assert verdict(0.9, 0.95, False, 0.49, 0.82).label == "absent"  # not above the shuffle null
    assert verdict(0.1, 0.2, True, 0.0, 0.1).n_met == 0


def test_verdict_per_statistic_null_and_thresholds_option():
    assert verdict(0.5, 0.6, {"pc1": False, "pc12": True}, 0.0, 0.0).value_manifold["passed_by"] == ["pc12"]
    assert verdict(0.2, 0.6, {"pc1": True, "pc12": False}, 0.0, 0.0).value_manifold["met"] is False
    strict = VerdictThresholds(pc_threshold=0.7, orth_layer_fraction=0.9, focusing_threshold=0.9)
    assert verdict(0.31, 0.62, True, 0.6, 0.82).label == "full"
    assert verdict(0.31, 0.62, True, 0.6, 0.82, thresholds=strict).label == "absent"
    with pytest.raises(ValueError, match="orth_layer_fraction"):
        VerdictThresholds(orth_layer_fraction=1.5)


def test_verdict_summary_and_missing_numbers():
    v = verdict(0.25, 0.62, True, 0.40, 0.82)
    text = v.summary()
    assert text.startswith("partial (2/3)")
    for piece in ("0.62", "0.40", "0.82", "0.30", "0.20", "[not met]"):
        assert piece in text
    missing = verdict(0.5, 0.6, True, 0.6, None)
    assert missing.label == "partial" and "focusing n/a" in missing.summary()
    json.dumps(v.to_dict(), allow_nan=False)


@pytest.mark.slow
def test_iid_gaussian_matrices_land_inside_their_own_null_band():
    """METHODS.md 2.4: an i.i.d. Gaussian matrix is the null; its PC1 falls inside the 95% band in
    about 95% of draws (here: at least 17 of 20), and is never flagged above the shuffle null often."""
    inside, flagged = 0, 0
    for seed in range(20):
        vm = value_manifold(np.random.default_rng(1000 + seed).standard_normal((30, 60)), n_boot=5, n_null=100,
                            seed=seed)
        band = vm.gaussian_null["pc1"]
        inside += band["low"] <= vm.pc1 <= band["high"]
        flagged += vm.above_shuffle_null["pc1"]
    assert inside >= 17 and flagged <= 3


@pytest.mark.slow
def test_planted_rank_one_share_is_recovered():
    """Rows = s_i * a + noise with known variances: PC1's share of the standardised variance is the
    planted signal fraction (up to sampling error)."""
    rng = np.random.default_rng(7)
    n, p, signal_sd, noise_sd = 2000, 40, 1.0, 1.0
    direction = rng.standard_normal(p)
    direction /= np.sqrt((direction ** 2).mean())  # unit mean square per column
    matrix = rng.normal(0, signal_sd, n)[:, None] * direction[None, :] + rng.normal(0, noise_sd, (n, p))
    # standardised column j: variance share of the signal = d_j^2 / (d_j^2 + 1); PC1 ~ mean of those + noise share 1/p
    d2 = direction ** 2
    expected = (d2 / (d2 + 1)).sum() / p + (1 / (d2 + 1)).sum() / p / p
    vm = value_manifold(matrix, n_boot=5, n_null=5)
    assert vm.pc1 == pytest.approx(expected, abs=0.03)


def test_key_columns_switched_off_are_left_out_and_counted():
    """A key dimension whose folded scale is exactly 0 (Gemma 3's key norm has such channels) is an
    all-zero column: left out of its head's cosines and counted, the rest measured as without it."""
    from geomprobe.analysis.key_orthogonality import key_orthogonality, orth_statistic

    rng = np.random.default_rng(0)
    heads = rng.normal(size=(2, 64, 8))
    with_off = heads.copy()
    with_off[0, :, [1, 5]] = 0.0
    result = key_orthogonality([heads, with_off])
    assert result.n_zero_columns == [0, 2]
    assert result.per_head[1][0] == pytest.approx(orth_statistic(np.delete(heads[0], [1, 5], axis=1)))
    assert result.per_head[1][1] == pytest.approx(orth_statistic(heads[1]))
    with pytest.raises(Exception, match="all zeros"):
        orth_statistic(with_off[0])  # the bare statistic still refuses them
