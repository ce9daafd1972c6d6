"""One estimate type in every results.json: each dict with a "ci95" of its own is an
Estimate {"value", "ci95", "method", "n"} (geomprobe.analysis.estimate). The flattened scalar
forms of the dataclass summaries (pc1 + pc1_ci95, focusing + focusing_ci95, ...) carry no "ci95"
key of their own; their "<name>_ci95" sits next to "<name>". The one documented exception is the
extract suite's per-layer row (geomprobe.results.LayerEntropy: attn_entropy_bits with a bare ci95
and attn_entropy_normalised with normalised_ci95), recognised by its exact keys. Distribution
summaries ({"mean", "p05", ...}, null bands {"median", "low", "high"}) have no CI and are not
estimates.

The results below are real analysis outputs on small synthetic inputs (numpy only, no model)."""

import json

import numpy as np
import pytest

from geomprobe.analysis.ablation_metrics import behaviour_change, paired_true_vs_random, pearson_change
from geomprobe.analysis.estimate import estimate
from geomprobe.analysis.focusing import attention_focusing
from geomprobe.analysis.qk_alignment import qk_alignment
from geomprobe.analysis.sula_metrics import condition_metrics, correlation, mean_ci
from geomprobe.analysis.value_manifold import value_manifold

N = 40
# flat rows that the schema documents with a bare "ci95" of one named field: {keys: that field}
FLAT_WITH_CI95 = {frozenset({"layer", "attn_entropy_bits", "ci95", "attn_entropy_normalised", "normalised_ci95"}):
                  "attn_entropy_bits"}  # geomprobe.results.LayerEntropy


def estimate_problems(results, path: str = "results") -> tuple[list[str], int]:
    """(what is wrong, how many Estimates were seen) in a results tree."""
    problems, seen = [], 0
    if isinstance(results, dict):
        if frozenset(results) in FLAT_WITH_CI95:
            owner = FLAT_WITH_CI95[frozenset(results)]
            if not isinstance(results[owner], (int, float)) or not isinstance(results["ci95"], list):
                problems.append(f"{path}: a flat {owner} row with {results[owner]!r}, ci95 {results['ci95']!r}")
        elif "ci95" in results:
            seen += 1
            missing = [key for key in ("value", "method", "n") if key not in results]
            if missing:
                problems.append(f"{path}: has ci95 but no {', '.join(missing)} (keys {sorted(results)})")
            if "mean" in results:
                problems.append(f"{path}: an estimate spelt with 'mean'")
            if not isinstance(results.get("method"), str) or not results.get("method"):
                problems.append(f"{path}: method {results.get('method')!r} is not a description")
            n = results.get("n")
            if not isinstance(n, int) or isinstance(n, bool) or n < 1:
                problems.append(f"{path}: n {n!r} is not a count of units")
            value, ci = results.get("value"), results["ci95"]
            vector = isinstance(value, list)
            pairs = ci if vector else [ci]
            if vector and len(ci) != len(value):
                problems.append(f"{path}: {len(value)} values but {len(ci)} intervals")
            if not all(isinstance(pair, list) and len(pair) == 2 for pair in pairs):
                problems.append(f"{path}: ci95 {ci!r} is not [low, high]" + (" per entry" if vector else ""))
        for key, child in results.items():
            if (isinstance(key, str) and key.endswith("_ci95") and key[:-5] not in results
                    and frozenset(results) not in FLAT_WITH_CI95):
                problems.append(f"{path}.{key}: a flattened interval without its '{key[:-5]}'")
            if key != "ci95":
                more, count = estimate_problems(child, f"{path}.{key}")
                problems += more
                seen += count
    elif isinstance(results, (list, tuple)):
        for index, child in enumerate(results):
            more, count = estimate_problems(child, f"{path}[{index}]")
            problems += more
            seen += count
    return problems, seen


def assert_estimates(results, at_least: int = 1) -> None:
    results = json.loads(json.dumps(results))  # as results.json holds it (tuples become lists)
    problems, seen = estimate_problems(results)
    assert not problems, "\n".join(problems)
    assert seen >= at_least, f"only {seen} estimates found"


def test_the_walker_catches_the_old_spellings():
    """Every shape the suites used to write is refused, so the tests below can fail."""
    old = [{"mean": 0.4, "ci95": [0.3, 0.5]},  # sula_metrics.mean_ci, _paired_mean, extract
           {"value": 0.1, "ci95": [0.0, 0.2]},  # ablation_metrics.pearson_change
           {"mean": [0.1, 0.2], "ci95": [[0.0, 0.2], [0.1, 0.3]], "per_head": [[0.1], [0.2]]},  # qk_alignment
           {"layer": 0, "attn_entropy_bits": 1.2, "ci95": [1.0, 1.4]},  # not quite a LayerEntropy row
           {"pc12": 0.1, "ci95": {"pc12": [0.0, 0.2]}},  # the domain suite's gain over mixed
           {"value": 0.1, "ci95": [0.0, 0.2], "method": "", "n": 3},
           {"value": 0.1, "ci95": [0.0, 0.2], "method": "bootstrap", "n": None},
           {"focusing_ci95": [0.1, 0.2]}]
    for entry in old:
        assert estimate_problems({"entry": entry})[0], entry
    good = estimate(0.4, [0.3, 0.5], "mean over prompts, percentile bootstrap 95% CI (50 resamples)", 10)
    assert estimate_problems({"entry": good, "pc1": 0.3, "pc1_ci95": [0.2, 0.4]}) == ([], 1)
    row = {"layer": 0, "attn_entropy_bits": 1.2, "ci95": [1.0, 1.4], "attn_entropy_normalised": 0.5,
           "normalised_ci95": [0.4, 0.6]}
    assert estimate_problems({"layers": [row]}) == ([], 0)


def _sula_inputs(seed: int = 0):
    rng = np.random.default_rng(seed)
    k = np.repeat([0, 1, 2, 4], N // 4)
    H_bayes = np.clip(1 - k / 5 + rng.normal(0, 0.02, N), 0, 1)
    H_model = np.clip(H_bayes + rng.normal(0, 0.1, N), 0, 1)
    return rng, k, H_bayes, H_model


def test_sula_condition_metrics_are_estimates():
    rng, k, H_bayes, H_model = _sula_inputs()
    pc1 = 3 * H_model + rng.normal(0, 0.3, N)
    metrics = condition_metrics(k, H_bayes, H_model, pc1, rng.uniform(0.5, 1, N), rng.uniform(0, 0.2, N),
                                next_entropy_bits=rng.uniform(2, 6, N), n_boot=50, seed=1,
                                p_model_l1=rng.uniform(0, 1, N))
    assert_estimates(metrics, at_least=12 + 4 * 4)
    assert metrics["mae_bits"]["value"] == pytest.approx(np.mean(np.abs(H_model - H_bayes)))
    assert metrics["mae_bits"]["n"] == N and metrics["per_k"][0]["H_bayes"]["n"] == N // 4
    assert "bootstrap" in metrics["mae_bits"]["method"] and "50 resamples" in metrics["mae_bits"]["method"]
    assert metrics["rho_k_pc1"]["method"].startswith("Spearman")
    assert metrics["pearson_H_model_H_bayes"]["method"].startswith("Pearson")
    assert metrics["pearson_H_model_H_bayes"]["pvalue"] is not None
    undefined = correlation(np.ones(N), H_model)  # a constant side: value None, still an Estimate
    assert undefined["value"] is None and "note" in undefined
    assert_estimates({"undefined": undefined, "mean": mean_ci(H_model, 20)}, at_least=2)


def test_ablation_statistics_are_estimates():
    rng, _, H_bayes, H_model = _sula_inputs(1)
    H_edit = np.clip(H_model + rng.normal(0, 0.05, N), 0, 1)
    change = behaviour_change(H_bayes, H_model, H_edit, rng.uniform(0.5, 1, N), rng.uniform(0.5, 1, N), n_boot=50)
    same = behaviour_change(H_bayes, H_model, H_model.copy(), n_boot=50)  # the exact-identity branches
    random = np.stack([np.abs(H_model + rng.normal(0, 0.05, N) - H_bayes) for _ in range(3)])
    results = {"change": change, "same": same,
               "paired": paired_true_vs_random(np.abs(H_edit - H_bayes), random, n_boot=50),
               "no_random": paired_true_vs_random(np.abs(H_edit - H_bayes), np.zeros((0, N))),
               "undefined": pearson_change(np.ones(N), H_model, H_edit)}
    assert_estimates(results, at_least=2 * 6 + 3)
    assert same["delta_mae_bits"]["value"] == 0.0 and same["delta_mae_bits"]["n"] == N
    assert "paired" in results["paired"]["method"] and results["no_random"]["value"] is None


def test_the_ablation_suite_results_are_estimates():
    """geomprobe.suites.ablation.summarise on made-up cached passes: the whole baseline/conditions tree."""
    from geomprobe.suites.ablation import summarise

    rng, _, H_bayes, _ = _sula_inputs(2)

    def one_pass(shift):
        p1 = np.clip(0.5 + 0.4 * (1 - H_bayes) * rng.choice([-1, 1], N) + shift, 0.01, 0.99)
        return {"token_probs": np.stack([p1 * 0.9, (1 - p1) * 0.9], 1).tolist(),
                "axis_entropy": {str(layer): {"spearman": float(rng.uniform(0.3, 0.6)), "sd_ratio": 1.0,
                                              "mean_coord": 0.0} for layer in (2, 3)}}

    passes = {"baseline": one_pass(0.0), "cut_L2_true": one_pass(0.05),
              **{f"cut_L2_random{draw:02d}": one_pass(0.01) for draw in range(3)}}
    results = summarise(passes, [("cut", "cut", {"lambda": 1.0})], [("L2", [2])], H_bayes, n_boot=30, seed=0,
                        last=3, n_random=3, positions="all")
    assert_estimates(results, at_least=4 + 6 + 2)
    assert results["conditions"][0]["vs_random"]["paired_error_bits"]["n"] == N


def test_qk_alignment_metrics_are_per_layer_estimates():
    rng = np.random.default_rng(0)
    n_rows, n_layers, n_heads, T = 12, 3, 2, 6
    visible = np.arange(T)[None] < rng.integers(2, T + 1, n_rows)[:, None]
    probs = rng.random((n_rows, n_layers, n_heads, T)) * visible[:, None, None]
    probs /= probs.sum(-1, keepdims=True)
    cosine = np.where(visible[:, None, None], rng.uniform(-1, 1, probs.shape), np.nan)
    evidence = visible & (rng.random((n_rows, T)) < 0.5)
    qk = qk_alignment(probs, cosine, visible, evidence=evidence, sequence=np.arange(n_rows) // 3, n_boot=40)
    assert_estimates(qk.to_dict(), at_least=7)
    entry = qk.metrics["attn_entropy_bits"]
    assert len(entry["value"]) == n_layers and len(entry["per_head"][0]) == n_heads
    assert entry["n"] == 4 and "over sequences" in entry["method"]
    assert "BCa bootstrap" in entry["method"] and len(entry["ci_method"]) == n_layers
    assert set(entry["ci_method"]) == {"percentile"}  # 4 sequences, 40 resamples: BCa's ends would be extreme ones
    per_row = qk_alignment(probs, cosine, visible, evidence=evidence, n_boot=400).metrics["attn_entropy_bits"]
    assert per_row["ci_method"] == ["BCa"] * n_layers  # 12 sequences, 400 resamples
    for value, (low, high) in zip(per_row["value"], per_row["ci95"]):
        assert low <= value <= high


class _Extraction:
    """What geomprobe.suites.extract.summarise reads of an Extraction."""

    def __init__(self, rng, n: int, n_layers: int, n_heads: int):
        self.layers = list(range(n_layers))
        self.prompt_ids = [f"p{i}" for i in range(n)]
        self.arrays = {"attn_entropy_bits": rng.uniform(0, 3, (n, n_layers, n_heads)),
                       "n_visible_keys": np.tile(rng.integers(4, 20, (n, 1)), (1, n_layers)),
                       "n_tokens": rng.integers(4, 20, n), "next_entropy_bits": rng.uniform(1, 8, n)}

    def __getitem__(self, name):
        return self.arrays[name]


def test_extract_summary_is_estimates():
    from geomprobe.suites.extract import summarise

    extraction = _Extraction(np.random.default_rng(0), 20, 3, 2)
    results = summarise(extraction, n_boot=30)
    assert_estimates(results, at_least=1)
    assert results["next_entropy_bits"]["value"] == pytest.approx(extraction["next_entropy_bits"].mean())
    assert results["next_entropy_bits"]["n"] == 20
    assert all(frozenset(row) in FLAT_WITH_CI95 for row in results["layers"])  # the documented flat rows


def test_domain_gain_and_the_flattened_summaries():
    """The domain suite's gain over mixed is a pair of Estimates; value_manifold and attention_focusing
    keep their flattened <name>_ci95 fields, each next to its <name>."""
    from geomprobe.suites.domain import gain_over_mixed

    rng = np.random.default_rng(0)
    latent = rng.standard_normal((30, 1))
    mixed = rng.standard_normal((30, 12))
    restricted = latent @ rng.standard_normal((1, 12)) + 0.3 * rng.standard_normal((30, 12))
    vm_mixed = value_manifold(mixed, n_boot=20, n_null=10).to_dict()
    vm_restricted = value_manifold(restricted, entropy_bits=latent[:, 0], n_boot=20, n_null=10).to_dict()
    gain = gain_over_mixed(vm_mixed, vm_restricted, mixed, restricted, n_boot=30, seed=0)
    focusing = attention_focusing(rng.uniform(0.5, 3, (20, 4, 2)), np.full((20, 4), 16), n_boot=20).to_dict()
    assert_estimates({"gain_over_mixed": gain}, at_least=2)
    assert gain["pc12"]["value"] == pytest.approx(vm_restricted["pc12"] - vm_mixed["pc12"])
    for flattened in (vm_mixed, vm_restricted, focusing):
        problems, _ = estimate_problems(json.loads(json.dumps(flattened)))
        assert not problems, problems
    assert "pc1_ci95" in vm_mixed and "focusing_ci95" in focusing
