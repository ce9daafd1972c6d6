"""Prefix reuse (geomprobe.prefix): an edit at layer l0 changes nothing below it, so the
edited passes run blocks l0..L-1 from a prefix state computed once. Proven here against today's
full passes: on every causal tiny family, a true-axis cut at a middle layer, at a multi-layer
set, a random axis and a final-position shift give the same arrays (token probabilities,
entropies, values and their projected coordinates) within 1e-5 (in practice bit for bit); the
ablation suite gives the same results.json with it on and off (GEOMPROBE_PREFIX_REUSE=0) on
windtunnel-sula; the mechanisms suite's head and layer ablations give the same scores within
1e-6; and every case it cannot prove falls back to full passes and says why. Stacked conditions
(GEOMPROBE_STACK_CONDITIONS, several edits of one state in one call) give every family's arrays
and pass numbers within 1e-5 of one-by-one passes, the suite the same results (a rerun recomputes
only the missing passes), and a stack that differs from one by one falls back."""

import json

import numpy as np
import pytest
import torch
from conftest import CAUSAL_TINY

from geomprobe import prefix
from geomprobe.analysis.sula_metrics import fit_axis
from geomprobe.backends.hf import HFBackend
from geomprobe.errors import ConfigError
from geomprobe.extraction import ExtractionConfig, _pad_id, extract, pad_batch, tokenize
from geomprobe.hooks import edit_values
from geomprobe.interventions import InterventionAxis, make_editor, random_directions
from geomprobe.prefix import PrefixBackend, PrefixUnavailable, SharedPrefix, max_difference, why_not
from geomprobe.runner import RunConfig, run
from geomprobe.suites.ablation import AblationConfig, _one_pass, _Prefixes, _Stacking, stacked_conditions
from geomprobe.suites.sula import SulaConfig

TOL = 1e-5
ARRAYS = ("token_probs", "next_entropy_bits", "attn_entropy_bits", "values", "n_visible_keys", "n_tokens")


pytestmark = pytest.mark.usefixtures("one_thread")  # tests/conftest.py


@pytest.fixture(autouse=True)
def reuse_on(monkeypatch):
    monkeypatch.delenv(prefix.ENV, raising=False)
    monkeypatch.delenv(prefix.BUDGET_ENV, raising=False)
    monkeypatch.delenv(prefix.STACK_ENV, raising=False)


def _hooks(adapter):
    """The hooks on the blocks and value modules (transformers may have added its own output
    capturing hooks to a session model that another test ran with output_hidden_states)."""
    return [(tuple(block._forward_pre_hooks), tuple(block._forward_hooks),
             tuple(adapter.value_module(layer)._forward_hooks)) for layer, block in enumerate(adapter.layers())]


def _no_stubs_or_hooks(adapter, before):
    """No forward stub left on a block, and the same hooks as `before`."""
    assert not any("forward" in block.__dict__ for block in adapter.layers())
    assert _hooks(adapter) == before


def _single_tokens(tokenizer, n):
    """n strings that are one token each under this tokenizer."""
    found = []
    for token_id in range(3, 200):
        text = tokenizer.decode([token_id])
        if text.strip() and tokenizer.encode(text, add_special_tokens=False) == [token_id]:
            found.append(text)
            if len(found) == n:
                return found
    raise AssertionError("no single-token strings found")


@pytest.fixture(scope="module")
def fitted_by_family(load_tiny, demo_prompts):
    """Per family: 12 demo prompts (two batches of 8 and 4, right-padded), the unedited
    extraction of every layer with two named tokens' probabilities, and an axis fitted at each
    layer (oriented on the next-token entropy)."""
    prompts = demo_prompts[:12]
    out = {}

    def get(name):
        if name not in out:
            loaded = load_tiny(name)
            config = ExtractionConfig(layers=list(range(loaded.adapter.shape.n_layers)), batch_size=8,
                                      tokens=_single_tokens(loaded.tokenizer, 2))
            base = extract(loaded, prompts, config, progress=False)
            n = len(prompts)
            axes = {layer: InterventionAxis.from_sula(fit_axis(base["values"][:, column].reshape(n, -1),
                                                               base["next_entropy_bits"]))
                    for column, layer in enumerate(base.layers)}
            out[name] = (loaded, prompts, config, base, axes)
        return out[name]

    return get


def _context(loaded, edit_axes, op, positions="all", **params):
    def context(final_index):
        return edit_values(loaded.adapter, sorted(edit_axes), make_editor(edit_axes, op, positions, final_index,
                                                                          **params))

    return context


def _cases(axes, n_layers):
    middle = n_layers // 2
    random_axis = axes[middle].with_direction(random_directions(axes[middle], 1, seed=3, layer=middle)[0])
    return {
        "true cut, middle layer": ({middle: axes[middle]}, "cut", "all", {"cut_lambda": 1.0}),
        "true cut, multi-layer set": ({layer: axes[layer] for layer in range(1, n_layers - 1)}, "cut", "all",
                                      {"cut_lambda": 1.0}),
        "random-axis cut, middle layer": ({middle: random_axis}, "cut", "all", {"cut_lambda": 1.0}),
        "true shift, final positions": ({middle: axes[middle]}, "shift", "final", {"shift_c": 1.0}),
    }


def _assert_same(a, b, what):
    for name in ARRAYS:
        if name in a.arrays or name in b.arrays:
            np.testing.assert_allclose(np.asarray(a[name], np.float64), np.asarray(b[name], np.float64), rtol=0,
                                       atol=TOL, err_msg=f"{what}: {name}")


@pytest.mark.slow
@pytest.mark.parametrize("name", CAUSAL_TINY)
def test_prefix_reuse_equals_full_passes_on_every_family(fitted_by_family, name):
    loaded, prompts, config, base, axes = fitted_by_family(name)
    hooks = _hooks(loaded.adapter)
    n_layers = loaded.adapter.shape.n_layers
    n = len(prompts)
    worst = 0.0
    cases = sorted(_cases(axes, n_layers).items(), key=lambda case: min(case[1][0]))  # lowest first edited layer first
    shared = SharedPrefix(loaded, prompts, config, min(cases[0][1][0]))
    assert shared.check["max_abs_diff"] <= TOL and shared.start == 1
    for case, (edit_axes, op, positions, params) in cases:
        start = min(edit_axes)
        if shared.start < start:  # the multi-layer set's prefix (below layer 1) moved up to the middle layer
            shared.advance(start)
            assert shared.start == start and shared.check["max_abs_diff"] <= TOL
            fresh = SharedPrefix(loaded, prompts, config, start)
            context = _context(loaded, edit_axes, op, positions, **params)
            _assert_same(fresh.extract(context), shared.extract(context), f"{name}, {case}: advanced vs fresh")
        context = _context(loaded, edit_axes, op, positions, **params)
        full = extract(loaded, prompts, config, progress=False, batch_context=context)
        reused = shared.extract(context)
        _assert_same(full, reused, f"{name}, {case}")
        # the edit did something, at and after its first layer only
        edited_column = base.layers.index(start)
        assert not np.allclose(full["values"][:, edited_column], base["values"][:, edited_column], atol=1e-6), case
        np.testing.assert_array_equal(reused["values"][:, :edited_column], base["values"][:, :edited_column])
        # projected coordinates on the true axes, every layer
        for column, layer in enumerate(full.layers):
            coords_full = axes[layer].project(full["values"][:, column].reshape(n, -1))
            coords_reused = axes[layer].project(reused["values"][:, column].reshape(n, -1))
            np.testing.assert_allclose(coords_reused, coords_full, rtol=0, atol=TOL, err_msg=f"{name}, {case}")
            worst = max(worst, float(np.abs(coords_reused - coords_full).max()))
        for array in ("token_probs", "next_entropy_bits", "attn_entropy_bits", "values"):
            if array in full.arrays:
                worst = max(worst, float(np.abs(np.asarray(full[array], np.float64) - reused[array]).max()))
        # the suite's own pass: identical outputs
        edit = (op, params, edit_axes, positions)
        assert _one_pass(loaded, prompts, config, axes, edit, shared) == _one_pass(loaded, prompts, config, axes, edit)
    assert worst <= TOL
    _no_stubs_or_hooks(loaded.adapter, hooks)


@pytest.mark.slow
@pytest.mark.parametrize("name", CAUSAL_TINY)
def test_every_readout_from_a_prefix_equals_run_batch(load_tiny, varied_prompts, name):
    """values, z, resid and hidden (the last layer's after the final norm) at every start layer."""
    loaded = load_tiny(name)
    hooks = _hooks(loaded.adapter)
    n_layers = loaded.adapter.shape.n_layers
    input_ids, attention_mask, final_index = pad_batch(tokenize(loaded.tokenizer, varied_prompts, None),
                                                       _pad_id(loaded.tokenizer))
    readouts = ("values", "z", "resid", "hidden")
    layers = list(range(n_layers))
    full, reused = HFBackend(loaded, layers, readouts, [3, 5]), PrefixBackend(loaded, layers, readouts, [3, 5])

    def halve(layer, values):
        return values * 0.5

    for start in range(n_layers):
        with edit_values(loaded.adapter, [start], halve):
            expected = full.run_batch(input_ids, attention_mask, final_index)
        state = reused.prefix(input_ids, attention_mask, final_index, start)
        with edit_values(loaded.adapter, [start], halve):
            got = reused.run_from(state)
        largest, close = max_difference(got, expected)
        assert close and largest <= TOL, (start, largest)
    _no_stubs_or_hooks(loaded.adapter, hooks)


def test_stubs_are_removed_when_the_forward_fails(load_tiny, varied_prompts):
    loaded = load_tiny("tiny-llama")
    adapter = loaded.adapter
    hooks = _hooks(adapter)
    input_ids, attention_mask, _ = pad_batch(tokenize(loaded.tokenizer, varied_prompts[:2], None),
                                             _pad_id(loaded.tokenizer))

    def failing():
        raise RuntimeError("injected")

    with pytest.raises(RuntimeError, match="injected"):
        prefix.block_inputs(adapter, 1, failing)
    _no_stubs_or_hooks(adapter, hooks)
    with pytest.raises(PrefixUnavailable, match="did not reach the last block"):
        prefix.block_inputs(adapter, 1, lambda: None)
    _no_stubs_or_hooks(adapter, hooks)
    inputs = prefix.block_inputs(adapter, 2, lambda: adapter.backbone()(input_ids=input_ids,
                                                                         attention_mask=attention_mask,
                                                                         use_cache=False))
    assert inputs.start == 2 and inputs.hidden.shape == (*input_ids.shape, adapter.shape.d_model)
    assert len(inputs.kwargs) == adapter.shape.n_layers - 2
    assert {"attention_mask", "position_embeddings", "position_ids"} <= set(inputs.kwargs[0])
    _no_stubs_or_hooks(adapter, hooks)


def test_what_is_not_proven_falls_back(load_tiny, demo_prompts, monkeypatch):
    loaded = load_tiny("tiny-neox")
    hooks = _hooks(loaded.adapter)
    assert why_not(loaded) is None
    assert "not proven for model type 'bert'" in why_not(load_tiny("tiny-bert"))
    monkeypatch.setenv(prefix.ENV, "0")
    assert why_not(loaded) == f"turned off ({prefix.ENV}=0)"
    with pytest.raises(PrefixUnavailable, match="turned off"):
        SharedPrefix(loaded, demo_prompts[:4], ExtractionConfig(layers=[1, 2, 3]), 2)
    monkeypatch.delenv(prefix.ENV)
    with pytest.raises(PrefixUnavailable, match="backend 'tl'"):
        SharedPrefix(loaded, demo_prompts[:4], ExtractionConfig(layers=[1, 2, 3], backend="tl"), 2)
    monkeypatch.setenv(prefix.BUDGET_ENV, "0.001")
    with pytest.raises(PrefixUnavailable, match="over the budget"):
        SharedPrefix(loaded, demo_prompts[:4], ExtractionConfig(layers=[1, 2, 3]), 2)
    monkeypatch.delenv(prefix.BUDGET_ENV)
    # a run from the prefix that does not reproduce the full pass is refused on the first batch
    real = PrefixBackend.run_from

    def off(self, state):
        result = real(self, state)
        result["next_entropy_bits"] = result["next_entropy_bits"] + 1e-3
        return result

    monkeypatch.setattr(PrefixBackend, "run_from", off)
    with pytest.raises(PrefixUnavailable, match="differs from a full pass"):
        SharedPrefix(loaded, demo_prompts[:4], ExtractionConfig(layers=[1, 2, 3]), 2)
    _no_stubs_or_hooks(loaded.adapter, hooks)


# ----------------------------------------------------------------------------------------------
# The ablation suite end to end


def _read(path):
    return json.loads(path.read_text())


PREFIX_SETTINGS = ("prefix_reuse", "prefix_reuse_note", "prefix_reuse_groups", "edited_block_runs_fraction",
                   "stacked_conditions", "stacked_conditions_note", "stacked_groups")


def _without_prefix_settings(results):
    results = json.loads(json.dumps(results))
    for key in PREFIX_SETTINGS:
        results["settings"].pop(key)
    return results


def _suite(tmp_path, name, monkeypatch, env=None, budget=None, model="windtunnel-sula", ops="cut,shift", stack=None,
           **options):
    out = tmp_path / name
    common = dict(n_per_k=3, n_boot=20)
    config = RunConfig(model=model, out=str(out))
    run(config, SulaConfig(controls="none", **common), progress=False)
    if env is not None:
        monkeypatch.setenv(prefix.ENV, env)
    if budget is not None:
        monkeypatch.setenv(prefix.BUDGET_ENV, budget)
    if stack is not None:
        monkeypatch.setenv(prefix.STACK_ENV, stack)
    run(config, AblationConfig(**{"n_random": 3, "ops": ops, "null": "off", **common, **options}), progress=False)
    monkeypatch.delenv(prefix.ENV, raising=False)
    monkeypatch.delenv(prefix.BUDGET_ENV, raising=False)
    monkeypatch.delenv(prefix.STACK_ENV, raising=False)
    return out / "ablation"


@pytest.mark.slow
def test_ablation_suite_with_and_without_prefix_reuse_on_windtunnel_sula(tmp_path, monkeypatch):
    # with one untrained copy, which runs its passes through the same prefix reuse
    on = _suite(tmp_path, "on", monkeypatch, null="init:1")
    off = _suite(tmp_path, "off", monkeypatch, env="0", null="init:1")
    over = _suite(tmp_path, "over-budget", monkeypatch, budget="0.0001", null="init:1")
    results_on, results_off, results_over = (_read(work / "results.json") for work in (on, off, over))
    settings = results_on["settings"]
    assert settings["prefix_reuse"] is True and "once per batch" in settings["prefix_reuse_note"]
    # windtunnel-sula: layer 0 has no axis, so the one set is L1 (first edited layer 1 of 3)
    groups = settings["prefix_reuse_groups"]
    assert [g["first_edited_layer"] for g in groups] == [1]
    assert groups[0]["used"] and groups[0]["computed_passes"] == 3 * 4 and groups[0]["check"]["max_abs_diff"] == 0.0
    assert settings["edited_block_runs_fraction"] == pytest.approx(2 / 3)
    assert results_off["settings"]["prefix_reuse"] is False
    assert results_off["settings"]["prefix_reuse_note"] == f"full passes: turned off ({prefix.ENV}=0)"
    assert results_off["settings"]["edited_block_runs_fraction"] == 1.0
    assert results_over["settings"]["prefix_reuse"] is False
    assert "over the budget" in results_over["settings"]["prefix_reuse_note"]
    # the same numbers, pass by pass and in results.json
    names = sorted(path.name for path in (on / "conditions").glob("*.json"))
    assert names == sorted(path.name for path in (off / "conditions").glob("*.json")) and len(names) == 13
    for file_name in names:
        a, b = _read(on / "conditions" / file_name), _read(off / "conditions" / file_name)
        np.testing.assert_allclose(a["token_probs"], b["token_probs"], rtol=0, atol=TOL, err_msg=file_name)
        assert a["axis_entropy"].keys() == b["axis_entropy"].keys()
        for layer in a["axis_entropy"]:
            for stat, value in a["axis_entropy"][layer].items():
                other = b["axis_entropy"][layer][stat]
                assert (value is None) == (other is None)
                if value is not None:
                    assert value == pytest.approx(other, abs=TOL), (file_name, layer, stat)
    base_on = _without_prefix_settings(results_on)
    assert base_on == _without_prefix_settings(results_off) == _without_prefix_settings(results_over)
    # a rerun of the interrupted suite reads every pass back: nothing computed, so nothing reused
    from conftest import unfinish

    unfinish(on.parent, "ablation")
    run(RunConfig(model="windtunnel-sula", out=str(on.parent)),
        AblationConfig(n_random=3, ops="cut,shift", n_per_k=3, n_boot=20, null="init:1"), progress=False)
    again = _read(on / "results.json")
    assert again["settings"]["reused_passes"] == 13 and again["settings"]["prefix_reuse"] is False
    assert "every one was read back" in again["settings"]["prefix_reuse_note"]
    again, base_on = _without_prefix_settings(again), json.loads(json.dumps(base_on))
    again["settings"].pop("reused_passes"), base_on["settings"].pop("reused_passes")
    assert again == base_on


@pytest.mark.slow
def test_ablation_suite_moves_one_prefix_up_through_its_layer_sets(tmp_path, monkeypatch):
    """tiny-neox's default sets, multi (1, 2) and L2: the prefix below layer 1 serves the multi
    set's passes, then moves up to layer 2 for L2's; the same results as full passes."""
    on = _suite(tmp_path, "on", monkeypatch, model="tiny-neox", ops="cut,only")
    off = _suite(tmp_path, "off", monkeypatch, env="0", model="tiny-neox", ops="cut,only")
    results_on, results_off = _read(on / "results.json"), _read(off / "results.json")
    groups = results_on["settings"]["prefix_reuse_groups"]
    assert [(g["first_edited_layer"], g["used"], g["computed_passes"]) for g in groups] == [(1, True, 8), (2, True, 8)]
    assert "from" not in groups[0] and groups[1]["from"].startswith("the previous group's prefix")
    assert all(g["check"]["max_abs_diff"] <= TOL for g in groups)
    assert results_on["settings"]["edited_block_runs_fraction"] == pytest.approx((8 * 3 + 8 * 2) / (16 * 4))
    assert _without_prefix_settings(results_on) == _without_prefix_settings(results_off)


# ----------------------------------------------------------------------------------------------
# Stacked conditions: the passes of one op and layer set, which differ in their
# axis only, run m at a time from the same prefix state, m x batch rows a call


def _assert_same_pass(a, b, what):
    """Two passes' JSON numbers (token probabilities, axis-entropy statistics) within TOL."""
    np.testing.assert_allclose(a["token_probs"], b["token_probs"], rtol=0, atol=TOL, err_msg=what)
    assert a["axis_entropy"].keys() == b["axis_entropy"].keys(), what
    for layer, stats in a["axis_entropy"].items():
        assert stats.keys() == b["axis_entropy"][layer].keys(), (what, layer)
        for stat, value in stats.items():
            other = b["axis_entropy"][layer][stat]
            if isinstance(value, float) and isinstance(other, float):
                assert value == pytest.approx(other, abs=TOL), (what, layer, stat)
            else:
                assert value == other, (what, layer, stat)


def _stack_cases(axes, n_layers, n_random=4):
    """Per case, the conditions of one stack group: the true axis and n_random random ones."""
    def group(layers, op, positions, params):
        draws = {layer: random_directions(axes[layer], n_random, seed=7, layer=layer) for layer in layers}
        return [(op, params, {layer: axes[layer] if draw is None else axes[layer].with_direction(draws[layer][draw])
                              for layer in layers}, positions) for draw in [None, *range(n_random)]]

    return {"shift -1 at final positions, multi-layer set": group(list(range(1, n_layers - 1)), "shift", "final",
                                                                 {"shift_c": -1.0}),
            "true and random cuts, middle layer": group([n_layers // 2], "cut", "all", {"cut_lambda": 1.0})}


@pytest.mark.slow
@pytest.mark.parametrize("name", CAUSAL_TINY)
def test_stacked_conditions_equal_one_by_one_on_every_family(fitted_by_family, monkeypatch, name):
    """GEOMPROBE_STACK_CONDITIONS=3 on groups of 5 conditions (a call of 3, then one of 2; batches of 8
    and 4 prompts): every array of every condition, and the suite's pass numbers, equal the
    condition's own full pass within 1e-5."""
    loaded, prompts, config, _, axes = fitted_by_family(name)
    hooks = _hooks(loaded.adapter)
    n_layers = loaded.adapter.shape.n_layers
    monkeypatch.setenv(prefix.STACK_ENV, "3")
    m, note = stacked_conditions(loaded, RunConfig(model=name), AblationConfig(n_random=4), len(prompts), 5,
                                 why_not(loaded))
    assert (m, note) == (3, f"{prefix.STACK_ENV}=3")
    prefixes, stacking = _Prefixes(loaded, prompts, config), _Stacking(m, note)
    for case, edits in _stack_cases(axes, n_layers).items():  # the multi-layer set (from layer 1) first
        start, layers = min(edits[0][2]), sorted(edits[0][2])
        contexts = [_context(loaded, edit_axes, op, positions, **params) for op, params, edit_axes, positions in edits]
        full = [extract(loaded, prompts, config, progress=False, batch_context=context) for context in contexts]
        # the extraction: every array, condition by condition
        shared = prefixes.below(start, passes=0)
        assert shared is not None and shared.start == start

        def editor_of(op, params, edit_axes, positions):
            return lambda final_index: make_editor(edit_axes, op, positions, final_index, **params)

        stacked = (shared.extract_stacked(layers, [editor_of(*edit) for edit in edits[:3]])
                   + shared.extract_stacked(layers, [editor_of(*edit) for edit in edits[3:]]))
        assert shared.stack_check["conditions"] == 2 and shared.stack_check["max_abs_diff"] <= TOL
        for number, (a, b) in enumerate(zip(full, stacked)):
            _assert_same(a, b, f"{name}, {case}, condition {number}")
        # the conditions differ from one another where they are edited, so rows handed to the wrong one would show
        column = full[0].layers.index(start)
        assert min(np.abs(full[j]["values"][:, column] - full[k]["values"][:, column]).max()
                   for j in range(len(edits)) for k in range(j)) > 1e-3, case
        # the suite's passes: 3 stacked and checked, then the other 2 stacked
        written = {}
        todo = [(f"condition{j}", edit, start, {"j": j}) for j, edit in enumerate(edits)]
        left = stacking.run(case, todo, prefixes, axes, lambda file_name, key, numbers: written.update({file_name: numbers}))
        assert left == [] and stacking.why_off is None
        record = stacking.groups[-1]
        assert (record["group"], record["stacked_passes"], record["calls"]) == (case, 5, 2)
        assert record["check"]["conditions"] == 3 and record["check"]["max_abs_diff"] <= TOL
        for j, edit in enumerate(edits):
            _assert_same_pass(written[f"condition{j}"], _one_pass(loaded, prompts, config, axes, edit),
                              f"{name}, {case}, condition {j}")
    assert [(g["first_edited_layer"], g["computed_passes"]) for g in prefixes.groups.values()] == [(1, 5), (2, 5)]
    prefixes.release()
    _no_stubs_or_hooks(loaded.adapter, hooks)


def test_repeat_rows_repeats_the_batch_and_keeps_what_the_rows_share():
    hidden = torch.arange(3 * 5 * 2.0).reshape(3, 5, 2)
    mask = torch.rand(3, 1, 5, 5) > 0.5
    position_ids = torch.arange(5)[None]
    rotary = (torch.rand(1, 5, 4), torch.rand(1, 5, 4))
    cache_position = torch.arange(3)  # 1-D, even where its length is the batch's
    kwargs = {"attention_mask": mask, "position_ids": position_ids, "position_embeddings": rotary, "cache": None,
              "use_cache": False, "cache_position": cache_position}
    out = prefix.repeat_rows({"hidden": hidden, **kwargs}, rows=3, times=4)
    assert out["hidden"].shape == (12, 5, 2) and out["attention_mask"].shape == (12, 1, 5, 5)
    for j in range(4):
        assert torch.equal(out["hidden"][3 * j: 3 * j + 3], hidden) and torch.equal(out["attention_mask"][3 * j: 3 * j + 3], mask)
    assert out["position_ids"] is position_ids and out["cache_position"] is cache_position
    assert out["position_embeddings"][0] is rotary[0] and out["position_embeddings"][1] is rotary[1]
    assert out["cache"] is None and out["use_cache"] is False
    assert prefix.repeat_rows(position_ids, rows=1, times=2).shape == (2, 5)  # a batch of one: repeated, harmless


def test_how_many_conditions_a_call_stacks(load_tiny, monkeypatch):
    loaded = load_tiny("tiny-neox")
    config, options = RunConfig(model="tiny-neox"), AblationConfig(n_random=3)

    def decide(why=None):
        return stacked_conditions(loaded, config, options, 15, 4, why)

    size, note = decide()
    assert size == 1 and note.startswith("one condition a call on the CPU: it keeps the numbers bit for bit")
    monkeypatch.setenv(prefix.STACK_ENV, "3")
    assert decide() == (3, f"{prefix.STACK_ENV}=3")
    assert decide("turned off")[0] == 1 and "turned off" in decide("turned off")[1]  # no prefix, no stacking
    monkeypatch.setenv(prefix.STACK_ENV, "50")
    assert decide() == (4, f"{prefix.STACK_ENV}=50, capped at the 4 conditions of a group")
    for bad in ("0", "two"):
        monkeypatch.setenv(prefix.STACK_ENV, bad)
        with pytest.raises(ConfigError, match="not a whole number"):
            decide()


@pytest.fixture(scope="module")
def unstacked_suite(tmp_path_factory):
    """windtunnel-sula's ablation with final-position cuts and shifts, one condition a call (the default
    on a CPU): 3 groups (cut, shift +1, shift -1 at L1) of 4 conditions."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        for env in (prefix.ENV, prefix.BUDGET_ENV, prefix.STACK_ENV):
            monkeypatch.delenv(env, raising=False)
        return _suite(tmp_path_factory.mktemp("unstacked"), "alone", monkeypatch, positions="final")


def _assert_same_suite(a, b):
    names = sorted(path.name for path in (a / "conditions").glob("*.json"))
    assert names == sorted(path.name for path in (b / "conditions").glob("*.json")) and len(names) == 13
    for file_name in names:
        _assert_same_pass(_read(a / "conditions" / file_name), _read(b / "conditions" / file_name), file_name)
    results_a, results_b = (_without_prefix_settings(_read(work / "results.json")) for work in (a, b))
    results_a["settings"].pop("reused_passes"), results_b["settings"].pop("reused_passes")
    assert results_a == results_b


@pytest.mark.slow
def test_ablation_suite_stacked_equals_unstacked_and_resumes(tmp_path, monkeypatch, unstacked_suite):
    alone = _read(unstacked_suite / "results.json")["settings"]
    assert alone["stacked_conditions"] == 1 and alone["stacked_groups"] == []
    assert alone["stacked_conditions_note"].startswith("one condition a call on the CPU")
    stacked = _suite(tmp_path, "stacked", monkeypatch, stack="3", positions="final")
    settings = _read(stacked / "results.json")["settings"]
    assert settings["stacked_conditions"] == 3 and settings["stacked_conditions_note"] == f"{prefix.STACK_ENV}=3"
    # groups of 4 at 3 a call: a stacked call of 3, checked on the first batch, and the fourth alone
    assert [(g["group"], g["stacked_passes"], g["calls"]) for g in settings["stacked_groups"]] == [
        ("cut_L1", 3, 1), ("shift+1_L1", 3, 1), ("shift-1_L1", 3, 1)]
    assert all(g["check"]["max_abs_diff"] <= TOL and "fell_back" not in g for g in settings["stacked_groups"])
    assert settings["prefix_reuse_groups"][0]["computed_passes"] == 12
    _assert_same_suite(stacked, unstacked_suite)
    # resume: two passes of one group and one of another are gone; only they are computed again
    conditions = stacked / "conditions"
    original = {path.name: (_read(path), path.stat().st_mtime_ns) for path in conditions.glob("*.json")}
    gone = ["shift+1_L1_random00.json", "shift+1_L1_random02.json", "cut_L1_true.json"]
    for file_name in gone:
        (conditions / file_name).unlink()
    from conftest import unfinish

    unfinish(stacked.parent, "ablation")  # as a run stopped before its summary leaves it
    monkeypatch.setenv(prefix.STACK_ENV, "3")
    run(RunConfig(model="windtunnel-sula", out=str(stacked.parent)),
        AblationConfig(n_random=3, ops="cut,shift", n_per_k=3, n_boot=20, positions="final", null="off"),
        progress=False)
    settings = _read(stacked / "results.json")["settings"]
    assert settings["reused_passes"] == 10 and settings["prefix_reuse_groups"][0]["computed_passes"] == 3
    assert [(g["group"], g["stacked_passes"], g["calls"]) for g in settings["stacked_groups"]] == [("shift+1_L1", 2, 1)]
    for path in conditions.glob("*.json"):
        if path.name in gone:
            _assert_same_pass(_read(path), original[path.name][0], path.name)
        else:
            assert path.stat().st_mtime_ns == original[path.name][1], f"{path.name} was computed again"
    _assert_same_suite(stacked, unstacked_suite)


@pytest.mark.slow
def test_stacking_that_differs_from_one_by_one_falls_back(tmp_path, monkeypatch, unstacked_suite):
    """A stacked state that is off by about 1e-2 fails the first group's check: every pass then runs
    one condition a call, with the same numbers as the unstacked run, and the settings say why."""
    real = prefix.repeat_state

    def off(state, times):  # not a constant offset, which the norms would remove
        stacked = real(state, times)
        noise = torch.randn(stacked.inputs.hidden.shape, generator=torch.Generator().manual_seed(0))
        stacked.inputs.hidden = stacked.inputs.hidden + 1e-2 * noise
        return stacked

    monkeypatch.setattr(prefix, "repeat_state", off)
    fallen = _suite(tmp_path, "fallen", monkeypatch, stack="3", positions="final")
    settings = _read(fallen / "results.json")["settings"]
    assert settings["stacked_conditions"] == 3 and len(settings["stacked_groups"]) == 1
    group = settings["stacked_groups"][0]
    assert group["group"] == "cut_L1" and group["stacked_passes"] == 0 and "differ" in group["fell_back"]
    assert group["check"]["max_abs_diff"] > TOL
    assert "from cut_L1 on, one condition a call (stacking fell back: 3 conditions run stacked differ" in \
        settings["stacked_conditions_note"]
    assert settings["prefix_reuse_groups"][0]["computed_passes"] == 12
    _assert_same_suite(fallen, unstacked_suite)


# ----------------------------------------------------------------------------------------------
# The mechanisms suite's head and layer ablations


def _largest_difference(a, b):
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        return max((_largest_difference(a[k], b[k]) for k in a), default=0.0)
    if isinstance(a, list):
        assert len(a) == len(b)
        return max((_largest_difference(x, y) for x, y in zip(a, b)), default=0.0)
    if a is None or b is None:
        assert a is None and b is None
        return 0.0
    return abs(float(a) - float(b))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["windtunnel-sula", "tiny-llama"])
def test_mechanism_ablation_scores_with_and_without_prefix_reuse(load_tiny, monkeypatch, name):
    from geomprobe.mechanisms import ablation_scores
    from geomprobe.windtunnel.tasks import make_task

    loaded, task = load_tiny(name), make_task("sula")
    hooks = _hooks(loaded.adapter)
    reused = ablation_scores(loaded, task, n_eval=48, n_reference=16, eval_seed=5)
    monkeypatch.setenv(prefix.ENV, "0")
    full = ablation_scores(loaded, task, n_eval=48, n_reference=16, eval_seed=5)
    assert reused.pop("prefix_reuse")["used"] is True
    assert full.pop("prefix_reuse") == {"used": False, "why": f"turned off ({prefix.ENV}=0)"}
    assert _largest_difference(reused, full) <= 1e-6
    assert reused["skip_layer"][0]["entropy_mae_bits"] != reused["baseline"]["entropy_mae_bits"]
    _no_stubs_or_hooks(loaded.adapter, hooks)


@pytest.mark.slow
def test_mechanism_ablations_fall_back_over_the_budget(load_tiny, monkeypatch):
    from geomprobe.mechanisms import ablation_scores
    from geomprobe.windtunnel.tasks import make_task

    loaded, task = load_tiny("windtunnel-sula"), make_task("sula")
    monkeypatch.setenv(prefix.BUDGET_ENV, "0.0001")
    scores = ablation_scores(loaded, task, n_eval=32, n_reference=8, eval_seed=5)
    reuse = scores.pop("prefix_reuse")
    assert reuse["used"] is False and "budget" in reuse["why"]
    monkeypatch.delenv(prefix.BUDGET_ENV)
    reused = ablation_scores(loaded, task, n_eval=32, n_reference=8, eval_seed=5)
    assert reused.pop("prefix_reuse")["used"] is True
    assert _largest_difference(reused, scores) <= 1e-6
