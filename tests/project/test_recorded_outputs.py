"""Fixed runs give the results they gave when recorded (tests/recorded.py): a restructuring that
moves code between files must not move a number. A recording made on this machine's CPU model and kernel set
(RECORDED/NAME/<cpu>-<kernels>/) is used where there is one, else the first one (RECORDED/NAME/, made before
the CPU model was recorded). Where this machine has the torch build, CPU kernels (and CPU model,
where recorded) of the recording, every results.json matches it exactly (package version aside);
elsewhere, the same keys and strings and every number to 1e-4 relative (float32 reductions round
differently)."""

from __future__ import annotations

import json
import math

import pytest
from recorded import RUNS, canonical, recording_for_here, run


def _close(a, b, where: str, problems: list[str]) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):
            problems.append(f"{where}: keys differ: {sorted(set(a) ^ set(b))}")
        for key in set(a) & set(b):
            _close(a[key], b[key], f"{where}.{key}", problems)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            problems.append(f"{where}: lengths {len(a)} vs {len(b)}")
        for i, (x, y) in enumerate(zip(a, b)):
            _close(x, y, f"{where}[{i}]", problems)
    elif isinstance(a, float) or isinstance(b, float):
        if not (isinstance(a, (int, float)) and isinstance(b, (int, float))
                and (a == b or math.isclose(a, b, rel_tol=1e-4, abs_tol=1e-6))):
            problems.append(f"{where}: {a} vs {b}")
    elif a != b:
        problems.append(f"{where}: {a!r} vs {b!r}")


@pytest.mark.slow
@pytest.mark.parametrize("name", list(RUNS))
def test_a_fixed_run_gives_its_recorded_results(tmp_path, name):
    from geomprobe.windtunnel.reference import same_kernels

    folder = recording_for_here(name)
    made_with = json.loads((folder / "made_with.json").read_text())
    assert made_with["command"] == RUNS[name], "the recorded command changed: record again (tests/recorded.py)"
    outputs = run(name, tmp_path / name)
    exact = same_kernels(made_with)
    for suite, results in outputs.items():
        recorded = (folder / f"{suite}.json").read_text()
        if exact and canonical(results) + "\n" == recorded:
            continue
        # other kernels, or the same ones in a process where an earlier test left other thread settings
        # (a fresh clone's full suite moved the sula run's low bits): every number to 1e-4; with other
        # kernels and no recording of their own, a difference skips (it cannot tell code from rounding)
        problems: list[str] = []
        _close(json.loads(canonical(results)), json.loads(recorded), suite, problems)
        if problems and not same_kernels(made_with):
            # Other kernels round float32 differently, and the sula run's rank statistics and BCa/percentile
            # choices then move by more than rounding: only a recording made with these kernels can guard it.
            from geomprobe.windtunnel.reference import made_with_here

            pytest.skip(f"{name}/{suite}: no recording for {made_with_here()} (the nearest, {made_with}, differs in "
                        f"{len(problems)} places): record one from unchanged code with `python tests/recorded.py`")
        assert not problems, f"{name}/{suite}: " + "; ".join(problems[:10])


def test_the_comparison_sees_a_changed_number_and_a_missing_key():
    problems: list[str] = []
    _close({"a": 1.0, "b": [1, 2.0], "c": "x"}, {"a": 1.0 + 1e-9, "b": [1, 2.0], "c": "x"}, "r", problems)
    assert problems == []
    _close({"a": 1.0, "b": [1, 2.1]}, {"a": 1.0, "b": [1, 2.0], "c": 3}, "r", problems)
    assert any("keys differ" in p for p in problems) and any("r.b[1]" in p for p in problems)
