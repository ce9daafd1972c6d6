"""Confounds of the SULA entropy axis (METHODS.md section 7, "Confounds"): H_bayes falls with k, so
rho(PC1, H_bayes) over all k also scores an axis that only counts examples. Checked against cases
whose answer is known (an axis that is a function of k only; one that reads H_bayes within k),
against independent formulas for the partial correlation, and on a random-init Llama with the
real Llama-3 tokenizer, where the raw rho sits in paper III's range and the controlled one does not."""

import json

import numpy as np
import pytest
from scipy.stats import pearsonr, rankdata, spearmanr

from geomprobe.analysis.confounds import (
    half_split,
    rank_partial_correlation,
    tie_ranks,
    trivial_mae_baselines,
    within_stratum_spearman,
)
from geomprobe.analysis.sula_metrics import condition_metrics, correlation
from geomprobe.sula_task import SulaSpec, generate, h_bayes_bits


@pytest.fixture(scope="module")
def sula_main():
    """k [n] and H_bayes [n] of 200 main-condition SULA prompts per k in (0, 1, 2, 4, 8), and n1 - n2."""
    records = generate(SulaSpec(n_per_k=200, seed=0), ["main"])["main"]
    return (np.array([r.k for r in records]), np.array([r.H_bayes for r in records]),
            np.array([r.n1 - r.n2 for r in records]))


# ----------------------------------------------------------------------------------------------
# Known answers


@pytest.mark.slow
def test_an_axis_that_only_counts_examples(sula_main):
    """PC1 = f(k) + noise independent of the evidence: the raw rho is high, every controlled one ~0."""
    k, H_bayes, _ = sula_main
    pc1 = -np.log1p(k) + np.random.default_rng(1).normal(0, 0.3, len(k))
    raw = correlation(pc1, H_bayes, "spearman", n_boot=200)
    assert abs(raw["value"]) > 0.6
    assert abs(correlation(k, pc1, "spearman", n_boot=50)["value"]) > 0.8
    given_k = rank_partial_correlation(pc1, H_bayes, strata=k, names=["k"], n_boot=300, seed=0)
    # under this null the partial rho has sd about 1 / sqrt(600 informative prompts) = 0.04
    assert abs(given_k["value"]) < 0.13 and given_k["pvalue"] > 0.001
    assert given_k["n"] == len(k) and "given k" in given_k["method"]
    per_k, pooled = within_stratum_spearman(pc1, H_bayes, k, n_perm=499, n_boot=200, seed=0)
    assert abs(pooled["value"]) < 0.13 and pooled["pvalue"] > 0.01 and pooled["ci95"][0] < 0.13
    # H_bayes is constant at k = 0 (no evidence) and k = 1 (always |n1 - n2| = 1): undefined there
    assert per_k[0]["value"] is None and per_k[1]["value"] is None and "constant" in per_k[0]["note"]
    assert all(abs(per_k[value]["value"]) < 0.2 for value in (2, 4, 8))
    assert pooled["n"] == 3 * 200  # the prompts of the k where both sides vary


@pytest.mark.slow
def test_an_axis_that_reads_the_posterior_within_k(sula_main):
    """PC1 = f(k) + g(H_bayes) + noise, g decreasing: the relation holds with k fixed, and the tests
    find it. (g = -log H_bayes, so that the small entropies at k = 8 are apart by more than the noise.)"""
    k, H_bayes, _ = sula_main
    pc1 = 0.3 * k - 0.2 * np.log2(H_bayes) + np.random.default_rng(2).normal(0, 0.05, len(k))
    given_k = rank_partial_correlation(pc1, H_bayes, strata=k, n_boot=200, seed=0)
    assert given_k["value"] < -0.5 and given_k["ci95"][1] < -0.4 and given_k["pvalue"] < 1e-10
    per_k, pooled = within_stratum_spearman(pc1, H_bayes, k, n_perm=199, n_boot=100, seed=0)
    assert pooled["value"] < -0.5 and pooled["pvalue"] == pytest.approx(1 / 200)
    assert all(per_k[value]["value"] < -0.5 and per_k[value]["pvalue"] == pytest.approx(1 / 200)
               for value in (2, 4, 8))


@pytest.mark.slow
def test_the_sula_intervals_are_bca_and_contain_their_estimates(sula_main):
    """On SULA-shaped data (5 values of k, 200 prompts each) every bootstrap interval of the
    correlations is BCa (the percentile interval is only the fallback), names it in
    its method, and contains its estimate; the BCa interval is the percentile one moved by the
    resamples' bias (not the same interval)."""
    k, H_bayes, _ = sula_main
    rng = np.random.default_rng(7)
    H_model = np.clip(H_bayes + rng.normal(0, 0.1, len(k)), 0, 1)
    pc1 = 0.3 * k - 0.2 * np.log2(H_bayes) + rng.normal(0, 0.3, len(k))
    metrics = condition_metrics(k, H_bayes, H_model, pc1, np.ones(len(k)), np.zeros(len(k)), n_boot=400, seed=1,
                                n_tokens=4 * k + rng.integers(0, 3, len(k)), n_perm=99)
    names = ("pearson_H_model_H_bayes", "spearman_H_model_H_bayes", "rho_pc1_H_bayes", "rho_pc1_H_model", "rho_k_pc1",
             "rho_pc1_H_bayes_given_k", "rho_pc1_H_bayes_within_k", "rho_pc1_H_bayes_given_n_tokens",
             "rho_pc1_H_bayes_given_k_n_tokens", "rho_n_tokens_pc1")
    entries = [metrics[name] for name in names] + [row["rho_pc1_H_bayes"] for row in metrics["per_k"]
                                                     if row["rho_pc1_H_bayes"]["value"] is not None]
    for entry in entries:
        low, high = entry["ci95"]
        assert "BCa bootstrap 95% CI" in entry["method"], entry["method"]
        assert low <= entry["value"] <= high and "lies" not in entry.get("note", "")
    # same resamples, same seed: the percentile interval of the raw rho differs from the BCa one
    idx = np.random.default_rng(1).integers(0, len(k), size=(400, len(k)))
    boot = np.array([spearmanr(pc1[i], H_bayes[i])[0] for i in idx])
    assert metrics["rho_pc1_H_bayes"]["ci95"] != pytest.approx(list(np.percentile(boot, [2.5, 97.5])), abs=1e-9)


@pytest.mark.slow
def test_the_permutation_p_is_uniform_under_the_null(sula_main):
    """With PC1 independent of H_bayes within k, p < 0.1 about 10% of the time (100 draws)."""
    k, H_bayes, _ = sula_main
    pvalues = []
    for draw in range(100):
        pc1 = -k + np.random.default_rng(100 + draw).normal(0, 1, len(k))
        pvalues.append(within_stratum_spearman(pc1, H_bayes, k, n_perm=99, n_boot=2, seed=draw)[1]["pvalue"])
    assert 0.02 <= np.mean(np.array(pvalues) < 0.1) <= 0.2  # binomial(100, 0.1): 2..20 is beyond 3 sd


# ----------------------------------------------------------------------------------------------
# Independent computations


@pytest.mark.slow
def test_partial_correlation_against_independent_formulas():
    rng = np.random.default_rng(0)
    n = 300
    z1, z2 = rng.normal(size=n), rng.exponential(size=n)
    strata = rng.integers(0, 4, n)
    x = z1 + np.sin(strata) + rng.normal(size=n)
    y = 0.5 * z1 - z2 + 0.3 * x + strata**2 + rng.normal(size=n)
    rx, ry, r1, r2 = (rankdata(v) for v in (x, y, z1, z2))

    # no covariate: Spearman rho itself, and scipy's p (t with n - 2 degrees of freedom)
    plain = rank_partial_correlation(x, y, n_boot=0)
    rho, p = spearmanr(x, y)
    assert plain["value"] == pytest.approx(rho, abs=1e-12) and plain["pvalue"] == pytest.approx(p, rel=1e-8)

    # one continuous covariate: the textbook first-order partial correlation of the rank correlations
    r_xy, r_xz, r_yz = spearmanr(x, y)[0], spearmanr(x, z1)[0], spearmanr(y, z1)[0]
    first_order = (r_xy - r_xz * r_yz) / np.sqrt((1 - r_xz**2) * (1 - r_yz**2))
    assert rank_partial_correlation(x, y, covariates=[z1], n_boot=0)["value"] == pytest.approx(first_order, abs=1e-10)

    # two covariates: minus the scaled off-diagonal of the inverse rank-correlation matrix
    precision = np.linalg.inv(np.corrcoef(np.stack([rx, ry, r1, r2])))
    expected = -precision[0, 1] / np.sqrt(precision[0, 0] * precision[1, 1])
    partial = rank_partial_correlation(x, y, covariates=[z1, z2], n_boot=0)
    assert partial["value"] == pytest.approx(expected, abs=1e-10)

    # strata: Pearson r of the ranks less each stratum's mean rank
    def demeaned(ranks):
        return ranks - np.array([ranks[strata == s].mean() for s in strata])

    by_strata = rank_partial_correlation(x, y, strata=strata, n_boot=0)
    assert by_strata["value"] == pytest.approx(pearsonr(demeaned(rx), demeaned(ry))[0], abs=1e-10)

    # strata and a covariate: numpy least squares on an explicit design, scipy Pearson of the residuals
    design = np.column_stack([np.ones(n), r1, *(strata == s for s in (1, 2, 3))]).astype(float)

    def residual(v):
        return v - design @ np.linalg.lstsq(design, v, rcond=None)[0]

    both = rank_partial_correlation(x, y, covariates=[z1], strata=strata, n_boot=200, seed=0)
    r, _ = pearsonr(residual(rx), residual(ry))
    assert both["value"] == pytest.approx(r, abs=1e-10)
    assert both["ci95"][0] < both["value"] < both["ci95"][1]
    assert "Student's t with n - 2 - (covariate columns)" in both["method"]


@pytest.mark.slow
def test_within_k_rho_is_scipy_spearman_per_k():
    rng = np.random.default_rng(3)
    k = np.repeat([0, 1, 2], 40)
    x, y = rng.normal(size=120), rng.normal(size=120) + 0.5 * np.repeat([0, 1, 2], 40)
    y[k == 1] += x[k == 1]
    per_k, pooled = within_stratum_spearman(x, y, k, n_perm=99, n_boot=50, seed=0)
    for value in (0, 1, 2):
        rows = k == value
        assert per_k[value]["value"] == pytest.approx(spearmanr(x[rows], y[rows])[0], abs=1e-12)
        assert per_k[value]["n"] == 40 and per_k[value]["ci95"][0] <= per_k[value]["value"] <= per_k[value]["ci95"][1]
    assert pooled["value"] == pytest.approx(np.mean([per_k[v]["value"] for v in (0, 1, 2)]), abs=1e-12)
    again = within_stratum_spearman(x, y, k, n_perm=99, n_boot=50, seed=0)
    assert again[1] == pooled  # seeded
    assert per_k[1]["pvalue"] == pytest.approx(1 / 100)


def _entropy_as_written(signed, alpha=0.9):
    """H_bayes the way geomprobe once computed it: h(p) = -p log2 p - (1 - p) log2 (1 - p)
    of p = sigmoid((n1 - n2) ln(alpha / (1 - alpha))), evaluated at the signed evidence, so that
    +d and -d round differently in the last bits."""
    p = 0.5 * (1.0 + np.tanh(0.5 * np.asarray(signed, dtype=np.float64) * np.log(alpha / (1 - alpha))))
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, p * np.log2(np.where(p > 0, p, 1.0)), 0.0) + \
            np.where(p < 1, (1 - p) * np.log2(np.where(p < 1, 1 - p, 1.0)), 0.0)
    return 0.0 - terms


@pytest.mark.slow
def test_equal_evidence_gives_bit_identical_h_bayes(sula_main):
    """Every prompt with the same |n1 - n2| (and the same target) has the same H_bayes float, in
    every condition, and the values are the closed form h(1 / (1 + 9^|n1 - n2|)) to 1e-12."""
    k, H_bayes, signed = sula_main
    np.testing.assert_array_equal(H_bayes, h_bayes_bits(np.abs(signed), 0))  # bit for bit
    for margin in np.unique(np.abs(signed)):
        assert len(set(H_bayes[np.abs(signed) == margin].tolist())) == 1, margin
    for target in ("posterior", "predictive"):
        for alpha in (0.6, 0.9, 0.99):
            for margin in range(12):
                values = {float(h_bayes_bits(n1, n1 + margin, alpha, target)) for n1 in range(4)}
                values |= {float(h_bayes_bits(n1 + margin, n1, alpha, target)) for n1 in range(4)}
                assert len(values) == 1, (target, alpha, margin)
                q = 1.0 / (1.0 + (alpha / (1 - alpha)) ** margin)
                if target == "predictive":
                    q = alpha * q + (1 - alpha) * (1 - q)
                closed = -(q * np.log2(q) + (1 - q) * np.log2(1 - q))
                assert values.pop() == pytest.approx(closed, abs=1e-12, rel=1e-12 if margin < 4 else 1e-6)
    spec = SulaSpec(n_per_k=60, seed=3, target="predictive", remap_labels=("wug", "kep"))
    for condition, records in generate(spec).items():
        by_margin = {}
        for r in records:
            by_margin.setdefault(abs(r.n1 - r.n2), set()).add((r.H_bayes, r.H_apparent))
        assert all(len(pairs) == 1 for pairs in by_margin.values()), condition


@pytest.mark.slow
def test_near_equal_entropies_are_ties(sula_main):
    """Entropies of +d and -d computed as written differ in their last bits; ranked as they are, an
    axis that reads the sign of the evidence would seem to track H_bayes within k. tie_ranks
    counts them as ties (for any caller's entropies), and geomprobe's own H_bayes no longer has
    the rounding at all (test_equal_evidence_gives_bit_identical_h_bayes)."""
    k, H_bayes, signed = sula_main
    as_written = _entropy_as_written(signed)
    symmetric = h_bayes_bits(np.abs(signed), 0)  # the same entropies, computed from |n1 - n2|
    assert not np.array_equal(as_written, symmetric)
    np.testing.assert_allclose(as_written, symmetric, rtol=1e-8, atol=1e-15)
    np.testing.assert_array_equal(tie_ranks(as_written), rankdata(symmetric))
    np.testing.assert_array_equal(rankdata(H_bayes), rankdata(symmetric))
    pc1 = signed + np.random.default_rng(4).normal(0, 0.01, len(k))  # the signed evidence, nothing else
    per_k, _ = within_stratum_spearman(pc1, as_written, k, n_perm=9, n_boot=2)
    reference, _ = within_stratum_spearman(pc1, symmetric, k, n_perm=9, n_boot=2)
    for value in (2, 4, 8):
        assert per_k[value]["value"] == pytest.approx(reference[value]["value"], abs=1e-12)
    naive = spearmanr(pc1[k == 8], as_written[k == 8])[0]
    assert abs(naive - per_k[8]["value"]) > 0.01  # what ranking the rounding would have reported
    assert spearmanr(pc1[k == 8], H_bayes[k == 8])[0] == pytest.approx(per_k[8]["value"], abs=1e-12)


# ----------------------------------------------------------------------------------------------
# Trivial MAE baselines


def test_k_only_baseline_is_the_per_k_mean():
    k = np.repeat([0, 1, 2], [4, 6, 5])
    H_bayes = np.array([1, 1, 1, 1, 0.2, 0.4, 0.6, 0.8, 0.3, 0.5, 0.0, 0.1, 0.2, 0.3, 0.9])
    H_model = np.linspace(0, 1, len(k))
    fit, score = half_split(k, seed=5)
    assert [int(np.sum(k[fit] == v)) for v in (0, 1, 2)] == [2, 3, 2]  # floor(n / 2) of each k
    assert sorted(np.concatenate([fit, score]).tolist()) == list(range(len(k)))
    assert not np.array_equal(half_split(k, seed=6)[0], fit)
    out = trivial_mae_baselines(H_bayes, H_model, k, n_boot=100, seed=5)
    per_k_mean = {v: H_bayes[fit][k[fit] == v].mean() for v in (0, 1, 2)}
    target = H_bayes[score]
    k_only = np.array([per_k_mean[v] for v in k[score]])
    assert out["k_only"]["value"] == pytest.approx(np.mean(np.abs(k_only - target)))
    median = np.array([np.median(H_bayes[fit][k[fit] == v]) for v in k[score]])
    assert out["k_only_median"]["value"] == pytest.approx(np.mean(np.abs(median - target)))
    assert out["constant"]["value"] == pytest.approx(np.mean(np.abs(H_bayes[fit].mean() - target)))
    assert out["zero"]["value"] == pytest.approx(target.mean())
    assert out["model"]["value"] == pytest.approx(np.mean(np.abs(H_model[score] - target)))
    assert out["model_minus_k_only"]["value"] == pytest.approx(out["model"]["value"] - out["k_only"]["value"])
    assert out["split"] == {**out["split"], "seed": 5, "n_fit": 7, "n_score": 8}
    for key in ("model", "constant", "k_only", "k_only_median", "zero", "model_minus_k_only"):
        assert out[key]["n"] == 8 and isinstance(out[key]["method"], str) and len(out[key]["ci95"]) == 2
    # H_bayes constant within each k: counting the examples is exact
    exact = trivial_mae_baselines(np.repeat([1.0, 0.469, 0.1], 10), np.full(30, 0.5), np.repeat([0, 1, 2], 10))
    assert exact["k_only"]["value"] == pytest.approx(0.0, abs=1e-12) and exact["constant"]["value"] > 0.2


@pytest.mark.slow
def test_condition_metrics_report_the_controlled_figures(sula_main):
    k, H_bayes, _ = sula_main
    rng = np.random.default_rng(6)
    n_tokens = 3 + 4 * k + rng.integers(0, 3, len(k))
    pc1 = -np.log1p(k) + rng.normal(0, 0.3, len(k))
    H_model = np.clip(H_bayes + rng.normal(0, 0.05, len(k)), 0, 1)
    metrics = condition_metrics(k, H_bayes, H_model, pc1, np.ones(len(k)), np.zeros(len(k)), n_boot=50, seed=0,
                                n_tokens=n_tokens, n_perm=99)
    assert abs(metrics["rho_pc1_H_bayes"]["value"]) > 0.6 and "confounded with k" in metrics["rho_pc1_H_bayes"]["note"]
    assert "confound" in metrics["rho_k_pc1"]["note"]
    assert abs(metrics["rho_pc1_H_bayes_given_k"]["value"]) < 0.1
    assert abs(metrics["rho_pc1_H_bayes_given_k_n_tokens"]["value"]) < 0.1
    for key in ("rho_pc1_H_bayes_within_k", "rho_pc1_H_bayes_given_n_tokens", "rho_n_tokens_pc1"):
        assert metrics[key]["value"] is not None, key
    assert [row["rho_pc1_H_bayes"]["value"] is None for row in metrics["per_k"]] == [True, True, False, False, False]
    baselines = metrics["mae_baselines"]
    assert baselines["zero"]["value"] > baselines["constant"]["value"] > baselines["k_only"]["value"]
    assert baselines["model"]["value"] < baselines["k_only_median"]["value"]


# ----------------------------------------------------------------------------------------------
# The measured case: a random-init Llama with the real Llama-3 tokenizer


@pytest.mark.slow
def test_a_random_llama3_axis_tracks_k_not_the_posterior(tmp_path, llama3_tokenizer_file):
    """An untrained Llama (4 layers, width 128, 8 heads, 2 KV heads, tied embeddings)
    with the real 128,256-token Llama-3 tokenizer, 20 prompts at each k in (0, 1, 2, 4, 8). Its
    raw |rho(PC1, H_bayes)| lies in paper III's LLM range (0.65-0.80) because PC1 follows k;
    given k it is small. The raw value depends on the init seed (|rho| 0.06-0.68 over seeds
    0-11 in this configuration, the controlled one below 0.2 in all of them): seed 9 is the one
    in the paper's range, which is the case the issue measured."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    from geomprobe.runner import RunConfig, run
    from geomprobe.suites.sula import SulaConfig

    tokenizer = PreTrainedTokenizerFast(tokenizer_file=str(llama3_tokenizer_file), bos_token="<|begin_of_text|>",
                                        eos_token="<|end_of_text|>")
    assert len(tokenizer) == 128256
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=128, intermediate_size=256, num_hidden_layers=4,
                         num_attention_heads=8, num_key_value_heads=2, tie_word_embeddings=True,
                         max_position_embeddings=512, initializer_range=0.1,
                         bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id)
    torch.manual_seed(9)
    model_dir = tmp_path / "random-llama3"
    LlamaForCausalLM(config).save_pretrained(model_dir)
    tokenizer.save_pretrained(model_dir)

    out = tmp_path / "run"
    run(RunConfig(model=str(model_dir), out=str(out), device="cpu"),
        SulaConfig(n_per_k=20, controls=(), n_boot=200), progress=False)
    main = json.loads((out / "sula" / "results.json").read_text())["conditions"]["main"]
    raw, given_k = main["rho_pc1_H_bayes"]["value"], main["rho_pc1_H_bayes_given_k"]["value"]
    assert main["n_prompts"] == 100
    assert abs(raw) > 0.6, raw  # measured -0.68
    assert abs(given_k) < 0.3, given_k  # measured +0.11
    assert abs(main["rho_k_pc1"]["value"]) > 0.6  # measured +0.78: PC1 counts the examples
    assert abs(main["rho_pc1_H_bayes_within_k"]["value"]) < 0.3
    assert abs(main["rho_pc1_H_bayes_given_k_n_tokens"]["value"]) < 0.3
    # an untrained model reads no evidence: counting the examples beats it
    baselines = main["mae_baselines"]
    assert baselines["k_only"]["value"] < baselines["model"]["value"]
