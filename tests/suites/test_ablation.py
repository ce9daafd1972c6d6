"""Entropy-axis interventions (METHODS.md section 8): the operations re-extracted through a real
model, random control axes, layer sets (every set leaves a layer downstream; an explicit last
layer is refused), the statistics on known cases (orientation and r are both Spearman; multi-layer
sets are reported per downstream layer), and the ablation suite end to end on tiny-neox and
windtunnel-sula (bit-exact identity at lambda = 0, hooks removed on failure, resume, results.json)."""

import json

import numpy as np
import pytest
import torch

from geomprobe.analysis.ablation_metrics import (
    AXIS_STATISTIC,
    axis_entropy_correlation,
    behaviour_change,
    compare_with_random,
    paired_true_vs_random,
    reading,
)
from geomprobe.analysis.sula_metrics import fit_axis
from geomprobe.errors import ConfigError, RunDirectoryError
from geomprobe.extraction import ExtractionConfig, extract
from geomprobe.hooks import edit_values
from geomprobe.interventions import InterventionAxis, apply_op, load_axes, make_editor, random_directions
from geomprobe.runner import RunConfig, run
from geomprobe.suites.ablation import AblationConfig, default_layer_sets, layer_sets, parse_ops, summarise
from geomprobe.suites.sula import SulaConfig

EDITED = 2  # the layer edited in the model-level tests (tiny-neox has 4)


pytestmark = pytest.mark.usefixtures("one_thread")  # tests/conftest.py


def _n_hooks(adapter):
    return sum(len(adapter.value_module(layer)._forward_hooks) for layer in range(adapter.shape.n_layers))


@pytest.fixture(scope="module")
def fitted(load_tiny, demo_prompts):
    """tiny-neox, 16 demo prompts, their unedited extraction and an axis fitted at each layer 1-3
    (oriented on the next-token entropy: any per-prompt quantity serves these tests)."""
    loaded = load_tiny("tiny-neox")
    prompts = demo_prompts[:16]
    config = ExtractionConfig(layers=[1, 2, 3], batch_size=8)
    base = extract(loaded, prompts, config, progress=False)
    axes = {layer: InterventionAxis.from_sula(fit_axis(base["values"][:, column].reshape(16, -1),
                                                       base["next_entropy_bits"]))
            for column, layer in enumerate(base.layers)}
    return loaded, prompts, config, base, axes


def _edited(fitted, op, positions="all", **params):
    loaded, prompts, config, _, axes = fitted
    editor_axes = {EDITED: axes[EDITED]}

    def context(final_index):
        return edit_values(loaded.adapter, [EDITED], make_editor(editor_axes, op, positions, final_index, **params))

    return extract(loaded, prompts, config, progress=False, batch_context=context)


def _values(extraction, layer):
    return extraction["values"][:, extraction.layers.index(layer)].reshape(len(extraction.prompt_ids), -1)


# ----------------------------------------------------------------------------------------------
# The operations, re-extracted through the model with the hook active


@pytest.mark.slow
@pytest.mark.parametrize("positions", ["all", "final"])
def test_true_axis_cut_zeroes_the_re_extracted_coordinate(fitted, positions):
    _, _, _, base, axes = fitted
    axis = axes[EDITED]
    before = axis.project(_values(base, EDITED))
    assert before.std() > 0.5 * axis.sigma_u  # there is a coordinate to remove
    after = _edited(fitted, "cut", positions, cut_lambda=1.0)
    coords = axis.project(_values(after, EDITED))
    assert np.abs(coords).max() < 1e-4 * axis.sigma_u
    # the rest of the standardised vector is untouched: z' = z - (z.u) u
    z_before, z_after = axis.standardise(_values(base, EDITED)), axis.standardise(_values(after, EDITED))
    np.testing.assert_allclose(z_after, z_before - np.outer(before, axis.u), atol=1e-4)
    # upstream layers are bit for bit the same; downstream ones and the output move
    np.testing.assert_array_equal(_values(after, 1), _values(base, 1))
    assert not np.allclose(_values(after, 3), _values(base, 3), atol=1e-5)
    assert not np.allclose(after["next_entropy_bits"], base["next_entropy_bits"], atol=1e-6)


@pytest.mark.slow
def test_half_cut_scales_the_coordinate(fitted):
    _, _, _, base, axes = fitted
    axis = axes[EDITED]
    after = _edited(fitted, "cut", cut_lambda=0.5)
    np.testing.assert_allclose(axis.project(_values(after, EDITED)), 0.5 * axis.project(_values(base, EDITED)),
                               atol=1e-4 * axis.sigma_u)


def test_only_leaves_a_rank_one_value_set(fitted):
    _, _, _, base, axes = fitted
    axis = axes[EDITED]
    after = _edited(fitted, "only")
    z = axis.standardise(_values(after, EDITED))[:, axis.kept]
    singular = np.linalg.svd(z, compute_uv=False)
    assert singular[1] < 1e-5 * singular[0]
    # and the one direction is u, carrying the unedited coordinates
    np.testing.assert_allclose(z, np.outer(axis.project(_values(base, EDITED)), axis.u[axis.kept]), atol=1e-4)
    # before the edit the values were far from rank one
    z_base = axis.standardise(_values(base, EDITED))[:, axis.kept]
    s_base = np.linalg.svd(z_base, compute_uv=False)
    assert s_base[1] > 0.1 * s_base[0]


@pytest.mark.slow
@pytest.mark.parametrize("c", [1.0, -1.0])
def test_shift_moves_the_coordinate_by_exactly_c_sigma_u(fitted, c):
    _, _, _, base, axes = fitted
    axis = axes[EDITED]
    after = _edited(fitted, "shift", shift_c=c)
    moved = axis.project(_values(after, EDITED)) - axis.project(_values(base, EDITED))
    np.testing.assert_allclose(moved, c * axis.sigma_u, atol=1e-4 * axis.sigma_u)


@pytest.mark.slow
def test_final_positions_only_edit_the_final_token(fitted):
    """With positions="final" the earlier tokens' values are untouched, so a cut there changes the
    next-token distribution less than the same cut at every position (and not at all upstream)."""
    _, _, _, base, _ = fitted
    final = _edited(fitted, "cut", "final")
    everywhere = _edited(fitted, "cut", "all")
    change_final = np.abs(final["next_entropy_bits"] - base["next_entropy_bits"]).mean()
    change_all = np.abs(everywhere["next_entropy_bits"] - base["next_entropy_bits"]).mean()
    assert 0 < change_final < change_all


def test_apply_op_on_known_vectors_and_dropped_columns():
    """Standardised algebra by hand; columns dropped from the fit are never changed (float64 view)."""
    axis = InterventionAxis(mean=np.array([1.0, 2.0, 3.0, 5.0]), scale=np.array([2.0, 1.0, 1.0, 1.0]),
                            kept=np.array([True, True, True, False]), u=np.array([0.6, 0.8, 0.0, 0.0]),
                            sigma_u=1.5)
    v = torch.tensor([[3.0, 3.0, 7.0, 9.0]])  # z = (1, 1, 4, 0), z.u = 1.4
    cut = apply_op(v, axis, "cut")
    np.testing.assert_allclose(cut.numpy(), [[3.0 - 2 * 1.4 * 0.6, 3.0 - 1.4 * 0.8, 7.0, 9.0]], rtol=1e-6)
    only = apply_op(v, axis, "only")
    np.testing.assert_allclose(only.numpy(), [[1.0 + 2 * 1.4 * 0.6, 2.0 + 1.4 * 0.8, 3.0, 9.0]], rtol=1e-6)
    shift = apply_op(v, axis, "shift", shift_c=-1.0)
    np.testing.assert_allclose(shift.numpy(), [[3.0 - 2 * 1.5 * 0.6, 3.0 - 1.5 * 0.8, 7.0, 9.0]], rtol=1e-6)
    for edited in (cut, only, shift):
        assert edited[0, 3] == v[0, 3]  # dropped column: bit for bit
    assert torch.equal(apply_op(v, axis, "cut", cut_lambda=0.0), v)
    assert apply_op(v.to(torch.bfloat16), axis, "cut").dtype == torch.bfloat16
    with pytest.raises(ValueError, match="unknown operation"):
        apply_op(v, axis, "scale")


def test_random_axes_are_unit_orthogonal_to_u_and_seeded():
    rng = np.random.default_rng(5)
    kept = np.ones(40, dtype=bool)
    kept[[3, 17]] = False
    u = np.where(kept, rng.standard_normal(40), 0.0)
    axis = InterventionAxis(mean=np.zeros(40), scale=np.ones(40), kept=kept, u=u / np.linalg.norm(u), sigma_u=2.0)
    dirs = random_directions(axis, 10, seed=0, layer=4)
    np.testing.assert_allclose(np.linalg.norm(dirs, axis=1), 1.0, atol=1e-12)
    assert np.abs(dirs @ axis.u).max() < 1e-12
    assert np.all(dirs[:, ~kept] == 0)
    np.testing.assert_array_equal(dirs, random_directions(axis, 10, seed=0, layer=4))
    assert not np.allclose(dirs, random_directions(axis, 10, seed=1, layer=4))
    assert np.abs(dirs @ dirs.T - np.eye(10)).max() < 0.8  # ten different draws
    # a random control keeps the standardisation and sigma_u, with another direction
    control = axis.with_direction(dirs[0])
    assert control.sigma_u == axis.sigma_u and np.array_equal(control.mean, axis.mean)


# ----------------------------------------------------------------------------------------------
# Options and statistics


def test_layer_sets_follow_paper_iii_fractions_of_depth_capped_below_the_last_layer():
    # paper III's 23 of 24 is the last layer: capped at n_layers - 2 so that a layer follows it
    assert default_layer_sets(24) == [("L12", [12]), ("L22", [22]), ("multi", [8, 12, 16, 20, 22])]
    assert default_layer_sets(4) == [("L2", [2]), ("multi", [1, 2])]
    assert default_layer_sets(3) == [("L1", [1]), ("multi", [0, 1])]  # the fractions collapse to 1: layers 0-1
    assert default_layer_sets(32) == [("L16", [16]), ("L30", [30]), ("multi", [11, 16, 21, 27, 30])]
    assert default_layer_sets(2) == [("L0", [0])]
    names = [name for name, _, _ in parse_ops("shift,cut", 0.5)]
    assert names == ["cut", "shift+1", "shift-1"] and parse_ops("cut", 0.5)[0][2] == {"cut_lambda": 0.5}
    with pytest.raises(ConfigError, match="unknown operation"):
        parse_ops("cut,ablate", 1.0)


@pytest.mark.parametrize("n_layers", range(2, 65))  # 3 (windtunnel-sula), 4 (tiny), 24 (Pythia-410M)
def test_default_layer_sets_leave_a_downstream_layer(n_layers):
    sets = default_layer_sets(n_layers)
    assert sets and all(0 <= min(layers) and max(layers) <= n_layers - 2 for _, layers in sets)
    assert all(len(layers) == 1 for name, layers in sets if name != "multi")


def test_a_choice_with_nothing_downstream_is_refused(load_tiny):
    adapter = load_tiny("tiny-neox").adapter  # 4 layers
    for layers in ([3], [1, 3]):
        with pytest.raises(ConfigError, match=r"includes the last layer \(3\).*choose layers from 0 to 2"):
            layer_sets(adapter, layers)
    assert layer_sets(adapter, [2, 1]) == ([("L1", [1]), ("L2", [2]), ("multi", [1, 2])], True)
    with pytest.raises(ConfigError, match="at least 2 layers"):
        default_layer_sets(1)


def test_orientation_and_reported_r_are_the_same_statistic():
    """A case where Pearson and Spearman disagree in sign along the axis: one prompt far out on
    the axis with the highest entropy. The axis is oriented by Spearman, and the reported r is
    Spearman, so the unperturbed r is >= 0 (Pearson would report it negative)."""
    from scipy.stats import pearsonr, spearmanr

    rng = np.random.default_rng(3)
    n = 60
    H = np.sort(rng.uniform(0, 1, n))
    latent = H + rng.normal(0, 0.02, n)
    latent[-1] = -40.0  # the outlier: the largest H, far along the negative axis
    matrix = np.outer(latent, rng.normal(0, 1, 6)) + rng.normal(0, 0.01, (n, 6))
    axis = InterventionAxis.from_sula(fit_axis(matrix, H))
    coords = axis.project(matrix)
    assert spearmanr(coords, H)[0] > 0.8 and pearsonr(coords, H)[0] < -0.1  # the statistics disagree here
    reported = axis_entropy_correlation(coords, H, axis.sigma_u)
    assert AXIS_STATISTIC == "spearman" and "pearson" not in reported
    assert reported["spearman"] == pytest.approx(spearmanr(coords, H)[0]) and reported["spearman"] > 0


def _keys(tree) -> list[str]:
    if isinstance(tree, dict):
        return [key for k, v in tree.items() for key in [k, *_keys(v)]]
    return [key for v in tree for key in _keys(v)] if isinstance(tree, list) else []


def _made_up_pass(H_bayes, rng, shift, r_by_layer):
    p1 = np.clip(0.5 + 0.4 * (1 - H_bayes) * np.where(np.arange(len(H_bayes)) % 2, 1, -1) + shift, 0.01, 0.99)
    return {"token_probs": np.stack([p1 * 0.9, (1 - p1) * 0.9], 1).tolist(),
            "axis_entropy": {str(layer): {"spearman": r, "sd_ratio": 0.0 if r == 0.0 else 1.0, "mean_coord": 0.0}
                             for layer, r in r_by_layer.items()}}


def test_multi_layer_sets_are_reported_per_downstream_layer():
    """A multi-layer cut of layers 0 and 1 of a 4-layer model whose downstream rho moves up at layer
    2 and flips sign at layer 3: each layer is reported on its own, the one summary is the mean
    |change| (0.65, where a signed mean of the changes would give -0.45 and of the r's -0.05), and
    the edited layers' zeros are kept apart, labelled, out of the reading."""
    rng = np.random.default_rng(0)
    H_bayes = rng.uniform(0.05, 1, 40)
    n_random = 4
    passes = {"baseline": _made_up_pass(H_bayes, rng, 0.0, {0: 0.2, 1: 0.4, 2: 0.3, 3: 0.5}),
              "cut_multi_true": _made_up_pass(H_bayes, rng, 0.05, {0: 0.0, 1: 0.0, 2: 0.5, 3: -0.6})}
    for draw in range(n_random):
        passes[f"cut_multi_random{draw:02d}"] = _made_up_pass(H_bayes, rng, 0.01,
                                                              {0: 0.19, 1: 0.41, 2: 0.3 + 0.01 * draw, 3: 0.49})
    results = summarise(passes, [("cut", "cut", {"cut_lambda": 1.0})], [("multi", [0, 1])], H_bayes, n_boot=20,
                        seed=0, last=3, n_random=n_random, positions="all")
    condition = results["conditions"][0]
    geometry = condition["true"]["axis_entropy"]
    assert condition["downstream_layers"] == [2, 3] and geometry["first_downstream_layer"] == 2
    assert geometry["statistic"] == "spearman"
    down = geometry["downstream"]
    assert set(down) == {"2", "3"}
    assert (down["2"]["before"], down["2"]["after"]) == (0.3, 0.5) and down["2"]["change"] == pytest.approx(0.2)
    assert (down["3"]["before"], down["3"]["after"]) == (0.5, -0.6) and down["3"]["change"] == pytest.approx(-1.1)
    assert geometry["mean_abs_change_downstream"] == pytest.approx(0.65)
    edited = geometry["at_edited_layers"]
    assert set(edited) == {"0", "1"} and edited["1"]["after"] == 0.0 and "by construction" in edited["1"]["note"]
    # no signed average of r over layers anywhere in the condition
    assert not [key for key in _keys(condition) if "mean_r" in key or "intervened" in key]
    # against the random axes, per layer: layer 3's |change| 1.1 beats all four, p at its floor 1/5
    per_layer = condition["vs_random"]["axis_r_downstream_change"]
    assert per_layer["3"]["rank"] == 1 and per_layer["3"]["of"] == 5
    assert per_layer["3"]["p_value"] == pytest.approx(0.2) == per_layer["3"]["p_min"]
    assert condition["vs_random"]["axis_r_mean_abs_change_downstream"]["rank"] == 1
    assert [d["downstream_r"] for d in condition["random"]][1] == {"2": 0.31, "3": 0.49}
    text = condition["reading"]
    geometry_text = text.split(" / ")[0]
    assert geometry_text.startswith("downstream rho: L2 strengthened (+0.30 -> +0.50")
    assert "L3 reversed (+0.50 -> -0.60; |change| rank 1/5 among random axes, p 0.20)" in geometry_text
    assert "L0" not in text and "L1" not in text and "output: behaviour" in text


def test_n_random_default_gives_a_smallest_p_of_0_05():
    assert AblationConfig().n_random == 19
    where = compare_with_random(0.5, [0.1] * 19, "greater")
    assert where["rank"] == 1 and where["of"] == 20
    assert where["p_value"] == pytest.approx(0.05) and where["p_min"] == pytest.approx(0.05)


def test_statistics_on_known_cases():
    # the true value above all 9 random values: rank 1 of 10, p = 1/10; ties count against it
    where = compare_with_random(0.5, [0.1] * 9, "greater")
    assert where["rank"] == 1 and where["of"] == 10 and where["p_value"] == pytest.approx(0.1)
    assert compare_with_random(0.1, [0.1] * 9)["p_value"] == 1.0
    assert compare_with_random(-0.5, [0.1, -0.2, 0.3], "abs")["rank"] == 1
    assert compare_with_random(0.5, [])["p_value"] is None and compare_with_random(0.5, [])["of"] is None
    # paired: per-prompt true minus the random mean
    paired = paired_true_vs_random(np.full(50, 2.0), np.stack([np.full(50, 1.0), np.full(50, 3.0), np.full(50, 0.5)]))
    assert paired["value"] == pytest.approx(2.0 - 1.5) and paired["ci95"] == [pytest.approx(0.5)] * 2
    # behaviour change: an identical pass changes nothing, exactly
    rng = np.random.default_rng(0)
    h_bayes, h_model = rng.uniform(0, 1, 200), rng.uniform(0, 1, 200)
    same = behaviour_change(h_bayes, h_model, h_model.copy(), n_boot=50)
    assert same["delta_mae_bits"]["value"] == 0.0 and same["delta_mae_bits"]["ci95"] == [0.0, 0.0]
    assert same["delta_pearson"]["value"] == 0.0
    moved = behaviour_change(h_bayes, h_model, h_model + 0.1, n_boot=50)
    assert moved["mean_dH_bits"]["value"] == pytest.approx(0.1)
    assert moved["mean_abs_dH_bits"]["value"] == pytest.approx(0.1)
    assert moved["delta_pearson"]["value"] == pytest.approx(0.0, abs=1e-12)  # a constant shift keeps Pearson
    # axis-entropy correlation: a removed coordinate reads 0, with its sd ratio
    removed = axis_entropy_correlation(rng.normal(0, 1e-7, 200), h_model, sigma_u=2.0)
    assert removed["spearman"] == 0.0 and removed["sd_ratio"] < 1e-6 and "note" in removed
    kept = axis_entropy_correlation(h_model * 3 + rng.normal(0, 0.1, 200), h_model, sigma_u=1.0)
    assert kept["spearman"] > 0.9
    # the reading speaks of the layers after the edit and of the output
    assert reading([(3, 0.3, 0.0, None)], same).startswith(
        "downstream rho: L3 destroyed (+0.30 -> +0.00) / output: behaviour unchanged")
    assert "output: behaviour changed" in reading([(3, 0.3, 0.29, None)], moved | {"delta_mae_bits": {"value": 0.05}})
    many = reading([(layer, 0.3, 0.1, None) for layer in (5, 6, 7)], same)
    assert "L5 weakened" in many and "L7 weakened" in many and "L6" not in many
    assert "mean |change| over 3 downstream layers 0.20" in many
    # a change under axis_r_change is no change, even across the zero threshold
    assert reading([(3, 0.1003, 0.0997, None)], same).startswith("downstream rho: L3 unchanged")


# ----------------------------------------------------------------------------------------------
# The suite


def _read(path):
    return json.loads(path.read_text())


@pytest.mark.slow
def test_ablation_suite_end_to_end(tmp_path):
    out = tmp_path / "run"
    common = dict(n_per_k=3, n_boot=20)
    config = RunConfig(model="tiny-neox", out=str(out))
    run(config, SulaConfig(controls="none", null="off", **common), progress=False)
    run(config, AblationConfig(n_random=2, null="off", **common), progress=False)
    work = out / "ablation"
    results = _read(work / "results.json")
    assert set(results) >= {"model", "settings", "axis", "baseline", "conditions", "thresholds",
                            "reference_paper_iii"}
    settings = results["settings"]
    # the defaults on 4 layers: L2 and multi 1, 2 (capped below the last layer), both measured at layer 3
    assert settings["layer_sets"] == [{"name": "L2", "layers": [2], "downstream": [3]},
                                      {"name": "multi", "layers": [1, 2], "downstream": [3]}]
    assert settings["ops"] == ["cut", "only", "shift+1", "shift-1"] and settings["n_forward_passes"] == 1 + 4 * 2 * 3
    assert settings["smallest_p"] == pytest.approx(1 / 3) and settings["axis_entropy_statistic"].startswith("spearman")
    assert results["axis"]["source"].startswith("sula/axis.npz")  # same settings: the sula suite's axis reused
    # the axes used are the sula suite's, and they replay
    used, sula = load_axes(work / "axis.npz"), load_axes(out / "sula" / "axis.npz")
    assert sorted(used) == [1, 2, 3]
    for layer in used:
        np.testing.assert_array_equal(used[layer].u, sula[layer].u)
        assert used[layer].sigma_u == sula[layer].sigma_u
    with np.load(work / "random_axes.npz") as randoms:
        assert sorted(k for k in randoms.files if k.startswith("layer_")) == ["layer_1", "layer_2"]  # edited only
        for layer in (1, 2):
            dirs = randoms[f"layer_{layer}"]
            assert dirs.shape[0] == 2 and np.abs(dirs @ used[layer].u).max() < 1e-9
    assert [c["id"] for c in results["conditions"]] == [f"{op}/{s}" for op in ("cut", "only", "shift+1", "shift-1")
                                                       for s in ("L2", "multi")]
    # the orientation is Spearman, and so is r: unperturbed, every layer's rho on its own axis is >= 0
    assert all(entry["spearman"] > 0 for entry in results["baseline"]["axis_entropy"].values())
    for condition in results["conditions"]:
        assert len(condition["random"]) == 2 and condition["reading"]
        assert condition["downstream_layers"] == [3]
        assert set(condition["vs_random"]) >= {"delta_mae_bits", "mean_abs_dH_bits", "delta_pearson",
                                               "axis_r_downstream_change", "axis_r_mean_abs_change_downstream",
                                               "paired_error_bits"}
        assert set(condition["vs_random"]["axis_r_downstream_change"]) == {"3"}
        assert condition["reading"].startswith("downstream rho: L3 ") and "L2" not in condition["reading"]
    cut = next(c for c in results["conditions"] if c["id"] == "cut/multi")
    edited = cut["true"]["axis_entropy"]["at_edited_layers"]
    assert [edited[layer]["after"] for layer in ("1", "2")] == [0.0, 0.0]  # zero by construction, labelled so
    assert "by construction" in edited["2"]["note"]
    after = cut["true"]["axis_entropy"]["downstream"]["3"]
    assert after["after"] is not None and after["sd_ratio"] > 0.01  # downstream: measured, not made constant
    assert all(d["downstream_r"]["3"] is not None for d in cut["random"])
    # the baseline pass reproduces the sula suite's own main-condition probabilities
    baseline = np.array(_read(work / "conditions" / "baseline.json")["token_probs"])
    np.testing.assert_allclose(baseline, np.load(out / "sula" / "extraction-main" / "token_probs.npy"), rtol=1e-5)
    assert len(list((work / "conditions").glob("*.json"))) == 25
    manifest = _read(out / "manifest.json")
    assert manifest["suites"]["ablation"]["status"] == "complete"
    # a rerun of the finished suite answers from disk; one of an interrupted suite reads every pass back
    from conftest import unfinish

    unfinish(out, "ablation")
    run(config, AblationConfig(n_random=2, null="off", **common), progress=False)
    assert _read(work / "results.json")["settings"]["reused_passes"] == 25
    # the run as tables: the sula suite's per-prompt H_model and the ablation's unedited pass are the
    # same prompts through the same model
    from geomprobe import load_run

    tables = load_run(out)
    assert tables.suites == ["sula", "ablation"] and tables.results["ablation"]["schema_version"] >= 2
    sula_rows, baseline = tables.table("sula"), tables.table("ablation", "baseline")
    assert set(sula_rows["condition"]) == {"main"} and len(sula_rows) == len(baseline) == 15
    np.testing.assert_allclose(sula_rows["H_model"], baseline["H_model"], atol=1e-5)
    with pytest.raises(RunDirectoryError, match="no ablation condition 'nope'"):
        tables.table("ablation", "nope")


@pytest.mark.slow
def test_lambda_zero_equals_the_baseline_bit_for_bit(tmp_path):
    out = tmp_path / "run"
    run(RunConfig(model="tiny-neox", out=str(out)),
        AblationConfig(edit_layers=[1, 2], n_per_k=3, n_boot=20, ops="cut", cut_lambda=0.0, n_random=1, null="off"),
        progress=False)
    conditions = out / "ablation" / "conditions"
    baseline = _read(conditions / "baseline.json")
    edited = sorted(conditions.glob("cut_*.json"))
    assert len(edited) == 3 * 2  # L1, L2, multi(1,2); true and one random axis
    for path in edited:
        condition = _read(path)
        assert condition["token_probs"] == baseline["token_probs"], path.name
        assert condition["axis_entropy"] == baseline["axis_entropy"], path.name
    results = _read(out / "ablation" / "results.json")
    assert results["axis"]["source"].startswith("ablation/sula-main")  # no sula suite here: fitted by the ablation
    for c in results["conditions"]:
        assert c["true"]["behaviour"]["delta_mae_bits"]["value"] == 0.0
        assert c["true"]["behaviour"]["mean_abs_dH_bits"]["value"] == 0.0


@pytest.mark.slow
def test_hooks_are_removed_when_a_run_fails_and_the_rerun_resumes(tmp_path, load_tiny, monkeypatch):
    import geomprobe.interventions as interventions
    import geomprobe.models as models

    loaded = load_tiny("tiny-neox")
    monkeypatch.setattr(models, "load_model", lambda *args, **kwargs: loaded)
    real, calls = interventions.apply_op, {"n": 0}

    def failing(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 4:  # 15 prompts = 2 batches a pass: the second batch of the second edited pass
            raise RuntimeError("injected failure")
        return real(*args, **kwargs)

    monkeypatch.setattr(interventions, "apply_op", failing)
    out = tmp_path / "run"
    config = RunConfig(model="tiny-neox", out=str(out), batch_size=8)
    options = AblationConfig(edit_layers=[2], n_per_k=3, n_boot=20, ops="cut", n_random=1, null="off")
    with pytest.raises(RuntimeError, match="injected failure"):
        run(config, options, progress=False)
    assert _n_hooks(loaded.adapter) == 0
    done = sorted(p.name for p in (out / "ablation" / "conditions").glob("*.json"))
    assert done == ["baseline.json", "cut_L2_true.json"]
    monkeypatch.setattr(interventions, "apply_op", real)
    run(config, options, progress=False)
    results = _read(out / "ablation" / "results.json")
    assert results["settings"]["reused_passes"] == 2 and results["settings"]["n_forward_passes"] == 3
    assert _n_hooks(loaded.adapter) == 0


@pytest.mark.slow
def test_ablation_cli_options_and_errors(tmp_path):
    from typer.testing import CliRunner

    from geomprobe.cli import app

    base = ["run", "--model", "tiny-llama", "--suite", "ablation", "--out", str(tmp_path / "cli"), "--quiet",
            "--n-per-k", "2", "--n-boot", "20"]
    bad = CliRunner().invoke(app, [*base, "--edit-layers", "9"])
    assert bad.exit_code == 2 and "layer 9 is out of range" in bad.output and len(bad.output.strip().splitlines()) == 1
    bad = CliRunner().invoke(app, [*base, "--ops", "cut,scale"])
    assert bad.exit_code == 2 and "unknown operation(s) scale" in bad.output
    bad = CliRunner().invoke(app, [*base, "--positions", "first"])
    assert bad.exit_code == 2 and "--positions" in bad.output
    bad = CliRunner().invoke(app, [*base, "--edit-layers", "3"])  # the last layer: nothing downstream to measure
    assert bad.exit_code == 2 and len(bad.output.strip().splitlines()) == 1
    assert "--edit-layers includes the last layer (3)" in bad.output and "choose layers from 0 to 2" in bad.output
    bad = CliRunner().invoke(app, [*base, "--layers", "2"])  # what is extracted, not what is edited
    assert bad.exit_code == 2 and len(bad.output.strip().splitlines()) == 1
    assert "--layers chooses the layers extracted" in bad.output and "--edit-layers 2" in bad.output
    result = CliRunner().invoke(app, [*base, "--edit-layers", "2", "--ops", "shift", "--n-random", "1", "--lambda", "0.5",
                                      "--positions", "final", "--k", "0,2"])
    assert result.exit_code == 0, result.output
    results = _read(tmp_path / "cli" / "ablation" / "results.json")
    settings = results["settings"]
    assert settings["positions"] == "final" and settings["n_per_k"] == 2 and settings["k_values"] == [0, 2]
    assert [c["id"] for c in results["conditions"]] == ["shift+1/L2", "shift-1/L2"]
    assert results["settings"]["layer_sets"] == [{"name": "L2", "layers": [2], "downstream": [3]}]


@pytest.mark.slow
def test_ablation_suite_on_windtunnel_sula(tmp_path):
    """The 3-layer wind tunnel: layer 0's final-token values do not vary (no axis), so the defaults
    (L1, multi 0-1) leave L1 alone, measured at layer 2; the last layer alone is refused."""
    from typer.testing import CliRunner

    from geomprobe.cli import app

    out = tmp_path / "wt"
    common = dict(n_per_k=3, n_boot=20)
    config = RunConfig(model="windtunnel-sula", out=str(out))
    run(config, SulaConfig(controls="none", **common), progress=False)
    run(config, AblationConfig(n_random=3, ops="cut,shift", **common), progress=False)
    results = _read(out / "ablation" / "results.json")
    settings = results["settings"]
    assert settings["layer_sets"] == [{"name": "L1", "layers": [1], "downstream": [2]}]
    assert "0" in settings["dropped_layers"] and settings["smallest_p"] == pytest.approx(0.25)
    assert [c["id"] for c in results["conditions"]] == ["cut/L1", "shift+1/L1", "shift-1/L1"]
    assert results["baseline"]["axis_entropy"]["2"]["spearman"] >= 0  # oriented and reported by Spearman
    for condition in results["conditions"]:
        down = condition["true"]["axis_entropy"]["downstream"]["2"]
        where = condition["vs_random"]["axis_r_downstream_change"]["2"]
        assert down["after"] is not None and down["change"] == pytest.approx(down["after"] - down["before"])
        assert where["of"] == 4 and where["p_min"] == pytest.approx(0.25) and where["p_value"] >= 0.25
        assert condition["reading"].startswith("downstream rho: L2 ") and "output: behaviour" in condition["reading"]
    cut = results["conditions"][0]
    assert cut["true"]["axis_entropy"]["at_edited_layers"]["1"]["after"] == 0.0
    bad = CliRunner().invoke(app, ["run", "--model", "windtunnel-sula", "--suite", "ablation", "--out",
                                   str(tmp_path / "cli"), "--quiet", "--edit-layers", "2"])
    assert bad.exit_code == 2 and len(bad.output.strip().splitlines()) == 1
    assert "includes the last layer (2)" in bad.output
