"""Plans calibrated on this machine (geomprobe.timing): the CPU's rate measured once and read back,
each finished suite's estimate and wall time recorded, and the next plan scaled by what was
measured here, on models of about the same size only."""

from __future__ import annotations

import json

import pytest

from geomprobe import timing


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GEOMPROBE_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_the_cpu_rate_is_measured_once_and_read_back_until_recalibrated(cache, monkeypatch):
    calls = []
    monkeypatch.setattr(timing, "measure_cpu", lambda dtype="float32", seconds=1.0: calls.append(dtype) or (5e10, 1e10))
    first = timing.cpu_rates()
    again = timing.cpu_rates()
    assert calls == ["float32"] and first["new"] and not again["new"]
    assert again["flops"] == 5e10 and again["measured"] == first["measured"]
    stored = json.loads((cache / "machine.json").read_text())
    assert stored[timing.machine_key()]["float32"]["flops"] == 5e10
    timing.cpu_rates(recalibrate=True)
    assert calls == ["float32", "float32"]


def test_the_measured_rate_is_a_real_matmul_rate():
    flops, bandwidth = timing.measure_cpu(seconds=0.2)
    assert 1e8 < flops < 1e14 and 1e8 < bandwidth < 1e13


def test_calibration_is_the_median_ratio_of_the_last_runs_of_that_suite_and_size_here(cache):
    assert timing.calibration("sula", 10**6) is None
    for measured in (2.0, 4.0, 40.0):  # ratios 2, 4, 40: median 4
        timing.record_suite_time("sula", 10**6, 1.0, measured)
    timing.record_suite_time("sula", 10**9, 1.0, 500.0)  # another size: not read for a 1M model
    timing.record_suite_time("geometry", 10**6, 1.0, 100.0)  # another suite
    with (cache / "timings.jsonl").open("a") as handle:
        handle.write("{not json\n")
        handle.write(json.dumps({"date": "x", "machine": "another machine", "suite": "sula", "n_params": 10**6,
                                 "estimate_s": 1.0, "measured_s": 1000.0}) + "\n")
    found = timing.calibration("sula", 2 * 10**6)
    assert found["ratio"] == 4.0 and found["n_runs"] == 3
    assert timing.calibration("sula", 10**9)["ratio"] == 500.0
    for measured in range(1, 13):  # the last MAX_RUNS only
        timing.record_suite_time("geometry", 10**6, 1.0, 1000.0 + measured)
    assert timing.calibration("geometry", 10**6)["n_runs"] == timing.MAX_RUNS
    assert timing.calibration("geometry", 10**6)["ratio"] == pytest.approx(1000 + 7.5)


@pytest.mark.slow
def test_a_finished_suite_calibrates_the_next_plan_of_it(cache):
    from geomprobe.config import RunConfig
    from geomprobe.plan import plan
    from geomprobe.runner import run
    from geomprobe.suites.sula import SulaConfig

    config = RunConfig(model="tiny-neox", out=str(cache.parent / "run"), seed=0)
    suites = [SulaConfig(n_per_k=2, null="off", n_boot=20)]
    before = plan(suites=suites, run_config=config)
    assert before.time_how.startswith("uncalibrated") and before.suites[0].calibrated is None
    run(config, suites, quiet=True)
    (line,) = (cache / "timings.jsonl").read_text().splitlines()
    record = json.loads(line)
    assert record["suite"] == "sula" and record["estimate_s"] == pytest.approx(before.suites[0].estimate_s[1])
    after = plan(suites=suites, run_config=config)
    calibrated = after.suites[0].calibrated
    assert calibrated["n_runs"] == 1 and after.time_how.startswith("calibrated")
    low, high = calibrated["time_s"]
    assert low < record["measured_s"] < high and high / low == pytest.approx(timing.SPREAD**2)
    # the run's total adds the model's load and the fixed start-up (imports, run directory) to the suite
    from geomprobe.plan import STARTUP_S

    assert after.time_s[0] >= low + STARTUP_S[0]
    assert after.time_s[1] <= 2 * record["measured_s"] + 1 + STARTUP_S[1]

    run(config, suites, quiet=True)  # a rerun of the finished suite is not a measurement of it
    assert len((cache / "timings.jsonl").read_text().splitlines()) == 1
