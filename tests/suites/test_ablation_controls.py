"""Ablation controls that can fail (METHODS.md section 8.3-8.5): the matched
random axes against the model's own attention, the true axis's rank on random-init models over
seeds (uniform, where isotropic unit axes put it first), a planted readout that must come out
first and above its untrained copies, an untrained model that must come out indistinguishable
from its copies, and the statistics (Holm, the primary statistic, calibrated thresholds) on known
cases."""

import json

import numpy as np
import pytest
import torch

from geomprobe.analysis.ablation_metrics import (
    PRIMARY,
    calibrated_thresholds,
    holm,
    primary_statistic,
    reading,
)
from geomprobe.analysis.sula_metrics import fit_axis
from geomprobe.extraction import ExtractionConfig, extract
from geomprobe.hooks import edit_values
from geomprobe.interventions import (
    InterventionAxis,
    direction_sigmas,
    load_axes,
    make_editor,
    matched_directions,
    matched_gains,
    read_displacements,
)
from geomprobe.runner import RunConfig, run
from geomprobe.suites.ablation import AblationConfig, ablation_null_count

pytestmark = pytest.mark.usefixtures("one_thread")  # tests/conftest.py

LAYER = 1


def _random_llama(load_tiny, seed: int, path):
    """A random-init model of tiny-llama's configuration (hidden 128, 4 layers, 8 heads, 2 KV heads,
    initializer_range 0.1; its 512-token tokenizer), torch seed `seed`, saved at path."""
    from transformers import LlamaForCausalLM

    base = load_tiny("tiny-llama")
    if not (path / "config.json").exists():
        torch.manual_seed(seed)
        LlamaForCausalLM(base.model.config).save_pretrained(path)
        base.tokenizer.save_pretrained(path)
    return path


def _results(out):
    return json.loads((out / "ablation" / "results.json").read_text())


# ----------------------------------------------------------------------------------------------
# The matched controls against the model's own attention


@pytest.mark.slow
@pytest.mark.parametrize("name, positions", [("tiny-llama", "all"), ("tiny-llama", "final"), ("tiny-neox", "all")])
def test_read_displacement_is_what_the_attention_hands_its_output_projection(load_tiny, demo_prompts, name,
                                                                             positions):
    """read_displacements predicts, from one unedited pass, sum over heads of ||Delta z||^2 at the
    final token (z: each head's attention mix, the output projection's input) for a unit-gain edit
    of each op along the true axis and each control; the edited passes measure it through the
    model's own attention. With the matched gains every control hands over what the true axis does."""
    loaded = load_tiny(name)  # grouped-query attention; GPT-NeoX's fused q/k/v values
    prompts = demo_prompts[:8]
    config = ExtractionConfig(layers=[LAYER], readouts=("values", "z"), batch_size=8)
    base = extract(loaded, prompts, config, progress=False)
    values = base["values"][:, 0].reshape(len(prompts), -1)
    axis = InterventionAxis.from_sula(fit_axis(values, base["next_entropy_bits"]))
    directions = matched_directions(axis, values, 1, seed=0, layer=LAYER)

    def measured(edit_axis, op, positions):
        def context(final_index):
            return edit_values(loaded.adapter, [LAYER], make_editor({LAYER: edit_axis}, op, positions, final_index))

        edited = extract(loaded, prompts, config, progress=False, batch_context=context)
        delta = (edited["z"][:, 0] - base["z"][:, 0]).reshape(len(prompts), -1).astype(np.float64)
        return float((delta ** 2).sum(1).mean())

    energies = read_displacements(loaded, prompts, config, {LAYER: (axis, directions)}, positions)[LAYER]
    gains = matched_gains(energies)
    for op in ("cut", "only", "shift"):
        by_pass = [measured(axis, op, positions), measured(axis.with_direction(directions[0]), op, positions)]
        np.testing.assert_allclose(energies[op], by_pass, rtol=1e-4)
    matched = measured(axis.with_direction(directions[0], gains["cut"][0]), "cut", positions)
    assert matched == pytest.approx(energies["cut"][0], rel=1e-4)


def test_matched_directions_are_unit_orthogonal_to_u_in_the_values_span_and_seeded():
    rng = np.random.default_rng(0)
    latent = rng.normal(size=(60, 3)) * [3.0, 1.0, 0.5]
    matrix = latent @ rng.normal(size=(3, 12)) + 0.01 * rng.normal(size=(60, 12))
    matrix[:, 5] = 2.0  # a column that never varies: dropped from the fit, never edited
    axis = InterventionAxis.from_sula(fit_axis(matrix, latent[:, 0]))
    directions = matched_directions(axis, matrix, 8, seed=1, layer=2)
    np.testing.assert_allclose(np.linalg.norm(directions, axis=1), 1.0, atol=1e-12)
    assert np.abs(directions @ axis.u).max() < 1e-12 and np.all(directions[:, 5] == 0)
    np.testing.assert_array_equal(directions, matched_directions(axis, matrix, 8, seed=1, layer=2))
    # drawn from the covariance: they carry the values' spread (an isotropic direction in 11 columns, three of
    # which vary, would mostly not), and sigma_r is std of z.r over the prompts
    sigmas = direction_sigmas(axis, matrix, directions)
    np.testing.assert_allclose(sigmas, (axis.standardise(matrix) @ directions.T).std(axis=0))
    assert sigmas.min() > 0.2 and sigmas.max() < axis.sigma_u


# ----------------------------------------------------------------------------------------------
# The statistics on known cases


def test_holm_primary_statistic_and_calibrated_thresholds_on_known_cases():
    adjusted = holm({"a": 0.01, "b": 0.04, "c": 0.03, "d": 0.005, "e": None})
    # sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1, made monotone: 0.02, 0.03, 0.06, 0.06
    assert adjusted == {"d": pytest.approx(0.02), "a": pytest.approx(0.03), "c": pytest.approx(0.06),
                        "b": pytest.approx(0.06), "e": None}
    assert holm({"a": 0.6, "b": 0.9}) == {"a": 1.0, "b": 1.0}  # 1.2 capped at 1, then monotone
    stat = primary_statistic(0.4, [0.1, 0.1, 0.1])
    assert stat["rank"] == 1 and stat["of"] == 4 and stat["log2_ratio"] == pytest.approx(2.0)
    assert stat["measure"] == PRIMARY["measure"] == "mean_abs_dH_bits"
    assert primary_statistic(0.0, [0.1])["log2_ratio"] is None  # undefined, never 0
    changes = {"mae_bits": list(np.linspace(-1, 1, 101)), "pearson": [0.2, None, -0.4]}
    limits = calibrated_thresholds(changes)
    assert limits["mae_bits"] == pytest.approx(np.percentile(np.abs(np.linspace(-1, 1, 101)), 95))
    assert limits["pearson"] == pytest.approx(np.percentile([0.2, 0.4], 95)) and limits["n_pearson"] == 2
    # the reading says which thresholds decided "changed", and names the primary statistic
    change = {"delta_mae_bits": {"value": 0.02}, "delta_pearson": {"value": 0.3}}
    assert "behaviour changed" in reading([], change)  # the fixed fallback 0.01
    calibrated = reading([], change, thresholds={**limits, "mae_bits": 0.05, "pearson": 0.5},
                         primary={"statistic": stat, "untrained": None})
    assert "behaviour unchanged" in calibrated and "untrained copies' 95th percentile" in calibrated
    assert "primary, mean |dH| vs 3 matched random axes: rank 1/4" in calibrated
    assert calibrated.endswith("no untrained copies (--null off)")


def test_null_count_and_plan_count_the_copies():
    from geomprobe.plan import plan

    assert [ablation_null_count(n) for n in (1e6, 4e8, 7e9)] == [3, 3, 3]  # a copy costs a whole suite
    from geomprobe.nulls import specs_text

    for text, read in (("auto", "init:3"), ("init:2,step0", "init:2,step0"), ("init-once:auto", "init-once:3")):
        assert specs_text(AblationConfig(null=text).null_specs(n_params=1e6)) == read  # --null parsed in one place
    assert specs_text(AblationConfig(null="auto").null_specs(n_params=1e6, run_seed=2)) == "init:3"
    planned = plan(suites=AblationConfig(n_per_k=4, ops="cut", n_random=3, null="init:2"),
                   run_config=RunConfig(model="tiny-llama"), device="cpu")
    sweeps = planned.suites[0].sweeps
    on_nulls = [s for s in sweeps if s.on == "null"]
    assert len(planned.suites[0].loads) == 2 and len(on_nulls) == 2 * 4  # each copy: fit, read, baseline, conditions
    conditions = [s for s in sweeps if "conditions" in s.what]
    assert len(conditions) == 3 and {s.repeat for s in conditions} == {1 * 2 * (1 + 3)}  # 1 op, L2 and multi


# ----------------------------------------------------------------------------------------------
# Tests that can fail: random-init models, a planted readout, an untrained model against its copies


@pytest.mark.slow
def test_true_axis_rank_is_uniform_on_twenty_untrained_llamas(tmp_path, load_tiny):
    """On random-init Llamas the true axis's mean |dH| under a cut at layer 1 ranked 1st of 20
    against isotropic unit random axes in most seeds (six models, 50 prompts: ranks 1, 1, 2, 1, 3,
    2; with the real Llama-3 tokenizer and 500 prompts: 2, 1, 1, 1, 2, 1), because cutting PC1
    removes many times what a random unit axis does. With the matched controls the rank is a draw
    from 1..20 on an untrained model, for cut and for shift (analyses/ablation_ranks.py: 48 models,
    KS p 0.37-0.84). Over 20 models here: the ranks' KS test against uniform is not rejected at
    1%, and ranks 1 or 20 (10% under uniform) come up at most 6 times in 20 per condition (more:
    P 0.24% under uniform). The `only` operation, whose ranks are not uniform, carries no p-value."""
    from scipy import stats

    ranks: dict[str, list[int]] = {}
    for seed in range(20):
        model = _random_llama(load_tiny, seed, tmp_path / f"model-{seed}")
        out = tmp_path / f"run-{seed}"
        run(RunConfig(model=str(model), out=str(out), device="cpu"),
            AblationConfig(edit_layers=[LAYER], n_per_k=6, n_boot=20, ops="cut,shift", n_random=19, null="off"), progress=False)
        for condition in _results(out)["conditions"]:
            assert condition["primary"]["statistic"]["of"] == 20 and condition["primary"]["statistic"]["p_value"]
            ranks.setdefault(condition["id"], []).append(condition["primary"]["statistic"]["rank"])
    assert set(ranks) == {"cut/L1", "shift+1/L1", "shift-1/L1"}
    for name, values in ranks.items():
        values = np.array(values)
        midpoints = (values - 0.5) / 20  # uniform on (0, 1) in steps of 1/20 under the null
        assert stats.kstest(midpoints, "uniform").pvalue > 0.01, (name, values.tolist())
        assert np.sum((values == 1) | (values == 20)) <= 6, (name, values.tolist())


def _plant_readout(run_dir, model_dir, out):
    """The planted readout of (b), saved at out: the layer's output projection writes the values'
    coordinate on the entropy axis of the run in run_dir (read as s^-1 u per kv head) into the
    direction that separates the two labels' logits (also analyses/controls.py's positive control)."""
    from transformers import AutoTokenizer, LlamaForCausalLM

    results = _results(run_dir)
    axis = load_axes(run_dir / "ablation" / "axis.npz")[LAYER]
    label_ids = [results["settings"]["label_choice"]["token_ids"][w] for w in results["settings"]["labels"]]
    planted = LlamaForCausalLM.from_pretrained(model_dir)
    config = planted.config
    group, d_head = config.num_attention_heads // config.num_key_value_heads, config.head_dim
    read = np.where(axis.kept, axis.u / axis.scale, 0.0)
    read = torch.tensor(read / np.linalg.norm(read), dtype=torch.float32)
    unembed = planted.lm_head.weight.detach()
    towards = unembed[label_ids[0]] - unembed[label_ids[1]]
    towards = towards / towards.norm()
    with torch.no_grad():
        weight = planted.model.layers[LAYER].self_attn.o_proj.weight  # [d_model, n_heads * d_head]
        for head in range(config.num_attention_heads):
            kv = head // group
            weight[:, head * d_head:(head + 1) * d_head] += 20.0 / group * torch.outer(
                towards, read[kv * d_head:(kv + 1) * d_head])
    planted.save_pretrained(out)
    AutoTokenizer.from_pretrained(model_dir).save_pretrained(out)
    return out


@pytest.mark.slow
def test_untrained_model_is_indistinguishable_and_a_planted_readout_is_above_untrained(tmp_path, load_tiny):
    """(c) A random-init model is one more untrained copy: its primary statistic (log2 of the true
    axis's mean |dH| over the matched random axes') lies among its copies' (each on its own axis),
    and its "behaviour changed" thresholds come from them. (b) The same model with a planted
    readout: the layer-1 output projection writes the values' coordinate on the entropy axis
    (read as s^-1 u per kv head) into the direction that separates the two labels' logits, so the
    output really reads the axis; the true cut is first among the matched random axes and above
    the untrained copies (measured: log2 ratio +3.63 against +0.10 +- 0.42)."""
    options = dict(n_per_k=8, n_boot=20, ops="cut", n_random=9, null="init:4")
    model = _random_llama(load_tiny, 0, tmp_path / "untrained")
    out = tmp_path / "run-untrained"
    run(RunConfig(model=str(model), out=str(out), device="cpu"), AblationConfig(**options, edit_layers=[LAYER]),
        progress=False)
    results = _results(out)
    condition = results["conditions"][0]
    against = condition["primary"]["untrained"]
    assert against["status"] == "indistinguishable from untrained" and against["n_nulls"] == 4, against
    assert condition["behaviour_thresholds"]["source"].startswith("untrained copies")
    assert "untrained copies (4)" in condition["reading"] and "primary, mean |dH|" in condition["reading"]
    copies = results["untrained_null"]["models"]
    assert [m["seed"] for m in copies] == [1000, 1001, 1002, 1003] and all("cut/L1" in m["conditions"] for m in copies)
    for copy in copies:  # each copy on its own axis, with its own matched controls
        own = load_axes(out / "ablation" / "nulls" / copy["name"] / "axis.npz")[LAYER]
        assert abs(own.u @ load_axes(out / "ablation" / "axis.npz")[LAYER].u) < 0.9
    with np.load(out / "ablation" / "random_axes.npz") as saved:
        assert saved[f"layer_{LAYER}"].shape[0] == 9 and saved[f"gain_cut_{LAYER}"].shape == (9,)
        assert np.all(saved[f"sigma_r_{LAYER}"] > 0)
    recorded = results["axis"]["controls"][str(LAYER)]
    assert len(recorded["sigma_r"]) == 9 and set(recorded["gain"]) == {"cut", "only", "shift"}

    # (b) plant the readout into the same weights
    planted_dir = _plant_readout(out, model, tmp_path / "planted")
    out = tmp_path / "run-planted"
    run(RunConfig(model=str(planted_dir), out=str(out), device="cpu"), AblationConfig(**options, edit_layers=[LAYER]),
        progress=False)
    condition = _results(out)["conditions"][0]
    assert condition["primary"]["statistic"]["rank"] == 1
    assert condition["primary"]["untrained"]["status"] == "above untrained", condition["primary"]["untrained"]
    from geomprobe import load_run

    evidence = load_run(out).evidence()  # the top label: a planted readout of the entropy axis reaches it
    assert evidence["state"] == "evidence" and evidence["better_than_untrained"] == [
        f"ablation cut/L{LAYER} (log2 true/random vs copies)"]


# ----------------------------------------------------------------------------------------------
# --definitions paper-code-as-released: the released code's GPT-NeoX value split


@pytest.mark.slow
def test_paper_code_as_released_edits_the_released_split(tmp_path, load_tiny, demo_prompts):
    """On GPT-NeoX the released code calls columns [2 H d, 3 H d) of the fused query_key_value
    output the values (read as (3, H, d); tiny-neox: k5, v5, q6, ..., v7) and its interventions
    write into them. The suite's edit there cuts the released coordinate and leaves every other
    fused column bit for bit; the edit axis is the raw-PCA PC1 of those columns; the random axes
    are the released ones, labelled unmatched; what is measured is geomprobe's, as always."""
    from geomprobe.hooks import Hook, hooked
    from geomprobe.paper_code import released_final_token_values
    from geomprobe.suites.ablation import paper_code_axes, released_edit

    loaded = load_tiny("tiny-neox")
    shape = loaded.adapter.shape
    width = shape.n_heads * shape.d_head
    prompts = demo_prompts[:6]
    released, _ = released_final_token_values(loaded, prompts, 2)
    axis = paper_code_axes({2: released}, np.arange(len(prompts), dtype=float))[2]
    config = ExtractionConfig(layers=[2], batch_size=6)

    def fused_output(context):
        seen = {}
        with context, hooked([Hook(loaded.adapter.value_module(2),
                                   lambda module, args, output: seen.__setitem__("qkv", output.detach().clone()))]):
            extract(loaded, prompts, config, progress=False)
        return seen["qkv"]

    import contextlib

    plain = fused_output(contextlib.nullcontext())
    cut = fused_output(released_edit(loaded, {2: axis}, "cut", "all", None, {"cut_lambda": 1.0}))
    assert torch.equal(cut[..., :2 * width], plain[..., :2 * width])  # the rest of q, k and v: untouched
    coordinate = cut[..., 2 * width:].double().numpy() @ axis.u
    assert np.abs(coordinate).max() < 1e-4 * np.abs(plain[..., 2 * width:].double().numpy() @ axis.u).max()

    out = tmp_path / "run"
    run(RunConfig(model="tiny-neox", out=str(out)),
        AblationConfig(edit_layers=[2], n_per_k=3, n_boot=20, ops="cut", n_random=2, null="off",
                       definitions="paper-code-as-released"),
        progress=False)
    results = _results(out)
    settings = results["settings"]
    assert settings["definitions"] == "paper-code-as-released" and "query_key_value columns 256-383" in \
        settings["released_values"]
    assert "released code's value split" in settings["edit_convention"]
    main = load_axes(out / "ablation" / "edit_axis.npz")[2]
    assert main.u.size == width and abs(np.linalg.norm(main.u) - 1) < 1e-9
    assert np.all(main.scale == 1.0) and np.all(main.mean == 0.0)  # raw, uncentred, as released
    assert results["axis"]["controls"]["2"]["read_displacement"] is None  # not the values the attention mixes
    assert results["axis"]["controls"]["2"]["gain"]["cut"] == [1.0, 1.0]
    condition = results["conditions"][0]
    assert condition["primary"]["controls"].startswith("unmatched") and "unmatched, as released, random" in \
        condition["reading"]


def test_a_control_that_would_amplify_rounding_is_refused():
    from geomprobe.suites.ablation import MAX_CONTROL_GAIN, refused_control, refused_for

    assert refused_control(np.array([0.5, 1.7, 4.3]), 2, "cut") is None
    assert refused_control(np.array([MAX_CONTROL_GAIN]), 2, "cut") is None
    why = refused_control(np.array([1.2, 3.1e7]), 2, "cut")
    assert why.startswith("layer 2:") and "3.1e+07" in why and "limit 100" in why
    assert refused_control(np.array([1.0, np.nan]), 0, "only") is not None
    controls = {1: {"refused": {"cut": None, "only": "layer 1: no"}}, 3: {"refused": {"cut": "layer 3: no"}}}
    assert refused_for(controls, "cut", [1]) == [] and refused_for(controls, "cut", [1, 3]) == ["layer 3: no"]


@pytest.mark.slow
def test_values_that_vary_along_the_axis_alone_get_no_matched_control(tmp_path, load_tiny):
    """Layer 1's values made rank one (every kv head's v_proj a_h b'): they vary along one direction,
    the axis, and every direction orthogonal to it carries only rounding. Matching a cut along such
    a direction would take gains near 1e7; the condition runs its true axis alone and says why its
    controls were refused."""
    from transformers import LlamaForCausalLM

    model = _random_llama(load_tiny, 3, tmp_path / "model")
    flat = LlamaForCausalLM.from_pretrained(model)
    with torch.no_grad():
        weight = flat.model.layers[LAYER].self_attn.v_proj.weight  # [n_kv * d_head, d_model]
        weight.copy_(torch.outer(torch.randn(weight.shape[0]), torch.randn(weight.shape[1])) * 0.1)
    flat.save_pretrained(tmp_path / "flat")
    load_tiny("tiny-llama").tokenizer.save_pretrained(tmp_path / "flat")
    out = tmp_path / "run"
    run(RunConfig(model=str(tmp_path / "flat"), out=str(out), device="cpu"),
        AblationConfig(edit_layers=[LAYER], n_per_k=6, n_boot=20, ops="cut,shift", n_random=4, null="off"), progress=False)
    results = _results(out)
    cut, shift = results["conditions"][0], results["conditions"][1]
    assert cut["id"] == f"cut/L{LAYER}" and cut["primary"]["controls"].startswith("refused: layer 1:")
    assert cut["random"] == [] and cut["primary"]["statistic"]["rank"] is None
    assert not list((out / "ablation" / "conditions").glob("cut_*_random*.json"))
    assert "gain up to" in results["axis"]["controls"][str(LAYER)]["refused"]["cut"]
    # a shift moves every prompt by sigma_u along the direction, whatever the spread: still matched
    assert shift["primary"]["controls"] == "matched" and len(shift["random"]) == 4
