"""The sequential rank test (geomprobe.analysis.null_comparison.SequentialRank): copies stop only
when the rank rule over every planned copy could no longer decide otherwise, so its decisions are
those of the full test (the level and the power with them), and the Besag-Clifford p-value of a
stopped sample is valid."""

import math

import numpy as np
import pytest

from geomprobe.analysis.null_comparison import (
    ABOVE,
    BELOW,
    SAME,
    SequentialRank,
    judge_against_nulls,
)


def _run(model: dict, copies: np.ndarray, planned: int, higher: dict | None = None):
    """Feed copies (rows: copies, columns: the statistics of `model`) until settled; the tracker and
    how many copies it used."""
    tracker = SequentialRank(planned)
    for name, value in model.items():
        tracker.watch(name, value, higher_is_better=(higher or {}).get(name, True))
    used = 0
    for row in copies:
        for column, name in enumerate(model):
            tracker.add(name, row[column])
        used += 1
        if tracker.settled():
            break
    return tracker, used


@pytest.mark.parametrize("planned", [19, 39])
def test_a_stopped_sample_gives_the_decision_of_every_copy(planned):
    """Random models and copies, with ties (values rounded to one decimal) and both directions:
    wherever the tracker stops, the full test over all planned copies says indistinguishable, and
    the stopped sample is judged so; where it does not stop, every copy was used."""
    rng = np.random.default_rng(planned)
    stopped = 0
    for trial in range(400):
        shift = rng.choice([0.0, 0.0, 2.5, -2.5, 6.0])
        copies = np.round(rng.standard_normal((planned, 2)), 1)
        model = {"a": round(float(rng.standard_normal() + shift), 1), "b": round(float(rng.standard_normal()), 1)}
        higher = {"a": True, "b": bool(trial % 2)}
        tracker, used = _run(model, copies, planned, higher)
        for column, name in enumerate(model):
            full = judge_against_nulls(model[name], copies[:, column], higher_is_better=higher[name])
            record = tracker.record(name)
            if used < planned:
                assert tracker.settled() and record["used"] == used
                assert full["status"] == SAME
                judged = judge_against_nulls(model[name], copies[:used, column], higher_is_better=higher[name],
                                             sequential=record)
                assert judged["status"] == SAME and judged["n_nulls"] == used and judged["rule"] == "rank"
                assert judged["sequential"]["planned"] == planned
                assert 0 < judged["p_value"] <= 1 and 0 < judged["p_value_below"] <= 1
            else:
                assert record is None
        stopped += used < planned
    assert 100 < stopped < 400  # both kinds of trial happen


def test_untrained_models_stop_after_a_few_copies_and_keep_the_level():
    """The model one more Gaussian copy (exchangeable): better or worse at most 5% of the time (the
    full rank rule's level), and about 6 copies used on average for one statistic, where the full
    test builds 19: with the model at quantile u of the copies, a copy on each side of it takes
    1/u + 1/(1 - u) - 1 copies on average before the cap at 19 (6.05 measured here)."""
    rng = np.random.default_rng(0)
    trials, decided, used_all = 4000, 0, []
    for _ in range(trials):
        copies = rng.standard_normal((19, 1))
        tracker, used = _run({"x": float(rng.standard_normal())}, copies, 19)
        used_all.append(used)
        if used == 19:
            decided += judge_against_nulls(tracker._model["x"], copies[:, 0])["status"] in (ABOVE, BELOW)
    assert decided / trials <= 0.10 + 3 * math.sqrt(0.1 * 0.9 / trials)  # both directions, 5% each
    assert 5.5 < np.mean(used_all) < 6.7


def test_the_besag_clifford_p_value_is_valid():
    """Under exchangeability P(p <= a) <= a for the stopped p-values (and the full ones)."""
    rng = np.random.default_rng(1)
    p_values = []
    for _ in range(4000):
        model = float(rng.standard_normal())
        copies = rng.standard_normal((19, 1))
        tracker, used = _run({"x": model}, copies, 19)
        p_values.append(judge_against_nulls(model, copies[:used, 0], sequential=tracker.record("x"))["p_value"])
    p_values = np.array(p_values)
    for level in (0.05, 0.1, 0.2, 0.5):
        assert np.mean(p_values <= level) <= level + 3 * math.sqrt(level * (1 - level) / len(p_values))


def test_a_model_better_than_every_copy_uses_them_all():
    """Planted power: a model far above the copies is never stopped early and is judged better, as
    without the stop."""
    rng = np.random.default_rng(2)
    copies = rng.standard_normal((19, 1))
    tracker, used = _run({"x": 10.0}, copies, 19)
    assert used == 19 and tracker.record("x") is None
    assert judge_against_nulls(10.0, copies[:, 0])["status"] == ABOVE


@pytest.mark.parametrize("planned, value", [(10, 0.0), (19, math.nan)])
def test_no_stop_below_19_copies_or_with_an_undefined_value(planned, value):
    """The t rule (under 19 copies) reads every copy's value; a NaN copy could bring the count of
    finite copies under 19: neither stops early."""
    tracker = SequentialRank(planned)
    tracker.watch("x", 0.0)
    for copy_value in (1.0, -1.0, value, 2.0, -2.0):
        tracker.add("x", copy_value)
    assert not tracker.settled() and tracker.record("x") is None
    assert tracker.summary()["used"] == planned and not tracker.summary()["stopped_early"]


@pytest.mark.slow
def test_an_untrained_model_stops_its_copies_early_with_the_decisions_of_all_19(tmp_path, load_tiny):
    """The SULA suite on an untrained tiny-llama (seed 11, not a null seed) against 19 planned copies:
    stopped early it builds fewer copies, and every status is the one all 19 copies give
    (--no-null-stop)."""
    import json

    from geomprobe import run
    from geomprobe.config import RunConfig
    from geomprobe.nulls import fresh_copy
    from geomprobe.suites.sula import SulaConfig

    loaded = load_tiny("tiny-llama")
    model_dir = tmp_path / "untrained"
    copy = fresh_copy(loaded, 11)
    copy.model.save_pretrained(model_dir)
    loaded.tokenizer.save_pretrained(model_dir)
    results = {}
    for stop in (True, False):
        out = tmp_path / f"run-{stop}"
        run(RunConfig(model=str(model_dir), out=str(out)),
            SulaConfig(n_per_k=4, n_boot=50, null="init:19", null_stop=stop), progress=False)
        results[stop] = json.loads((out / "sula" / "results.json").read_text())["untrained_null"]
        built = sorted(path.name for path in (out / "sula" / "nulls").iterdir())
        assert len(built) == results[stop]["copies"]["used"] == len(results[stop]["models"])
    stopped, full = results[True], results[False]
    assert stopped["copies"]["stopped_early"] and stopped["copies"]["used"] < 19
    assert not full["copies"]["stopped_early"] and full["copies"]["used"] == 19
    for name, comparison in full["comparisons"].items():
        assert stopped["comparisons"][name]["status"] == comparison["status"] == SAME
        assert stopped["comparisons"][name]["sequential"]["planned"] == 19
        # the copies both runs built gave the same values
        assert stopped["comparisons"][name]["nulls"] == comparison["nulls"][:stopped["copies"]["used"]]
