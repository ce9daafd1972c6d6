"""scripts/hostile_replay.py (issue 43 item 4): its classifier on fabricated outcomes, its answers and
mutations on small files (fast), and a few real cases through the command line (slow)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "hostile_replay.py"
_spec = importlib.util.spec_from_file_location("hostile_replay", SCRIPT)
replay = sys.modules["hostile_replay"] = importlib.util.module_from_spec(_spec)  # dataclasses look it up there
_spec.loader.exec_module(replay)
Outcome, classify = replay.Outcome, replay.classify


# the classifier ------------------------------------------------------------------------------------

def test_a_right_answer_is_ok():
    assert classify(Outcome(0, stdout="results: run\n")) == (replay.OK, "")


def test_a_refusal_in_one_line():
    done = Outcome(2, stderr="some torch warning\nerror: run/manifest.json is corrupt: rerun with --overwrite\n")
    assert classify(done) == (replay.ONE_LINE, "some torch warning")


def test_an_error_of_many_lines_or_none():
    assert classify(Outcome(1, stderr="a\nb\nc\nd\n"))[0] == replay.MESSY
    assert classify(Outcome(1))[0] == replay.MESSY


def test_a_traceback_anywhere_even_at_exit_0():
    text = 'Traceback (most recent call last):\n  File "x.py", line 1\nValueError: boom\n'
    assert classify(Outcome(1, stderr=text)) == (replay.TRACEBACK, "ValueError: boom")
    assert classify(Outcome(0, stdout=text))[0] == replay.TRACEBACK


def test_killed_at_the_timeout_is_a_hang():
    assert classify(Outcome(None, stderr="Traceback (most recent call last):\n"))[0] == replay.HANG


def test_damage_outweighs_everything():
    """A fabricated outcome: the command refused in one line, but a file beside the case was written."""
    done = Outcome(2, stderr="error: no\n", damage=["sentinel/linked/results.json changed"])
    assert classify(done) == (replay.DAMAGED, "sentinel/linked/results.json changed")
    assert classify(Outcome(None, damage=["x created beside the case folder"]))[0] == replay.DAMAGED


def test_a_changed_answer_at_exit_0_is_silent_wrong():
    """A fabricated outcome: exit 0, and the results' numbers are not the undamaged run's."""
    wrong = ["geometry/results.json.value_manifold.pc1 is nan, not 0.247"]
    assert classify(Outcome(0, wrong=wrong)) == (replay.SILENT_WRONG, wrong[0])
    # a command that only reads may answer less when it says so; a rerun may not
    assert classify(Outcome(0, wrong=wrong, warned=True, reads_only=True))[0] == replay.OK
    assert classify(Outcome(0, wrong=wrong, warned=True, reads_only=False))[0] == replay.SILENT_WRONG
    assert classify(Outcome(0, wrong=wrong, warned=False, reads_only=True))[0] == replay.SILENT_WRONG


# answers -------------------------------------------------------------------------------------------

def test_differences_within_the_tolerance():
    reference = {"a": 0.5, "b": float("nan"), "c": "done", "d": 3}
    assert replay.differences(reference, {"a": 0.5 + 1e-12, "b": float("nan"), "c": "done", "d": 3, "extra": 1}) == []
    assert replay.differences(reference, {"a": 0.75, "b": 1.0, "c": "failed"}) == [
        "a is 0.75, not 0.5", "b is 1.0, not nan", "c is 'failed', not 'done'"]
    assert replay.differences(reference, {"a": 0.5}, limit=5) == [
        "b missing (reference nan)", "c missing (reference 'done')", "d missing (reference 3)"]
    assert replay.differences(reference, None) == ["no answer to compare"]
    assert replay.differences({"x": 1.0}, {"x": float("inf")}) == ["x is inf, not 1.0"]


def test_flatten_leaves_out_timings_and_versions():
    flat = replay.flatten({"schema_version": 3, "seconds": 1.5, "x": [1, {"y": 2.5, "z": "s"}], "ok": True})
    assert flat == {".x[0]": 1, ".x[1].y": 2.5}
    assert replay.flatten({"z": "s"}, numbers_only=False) == {".z": "s"}


def test_results_are_read_without_geomprobe(tmp_path):
    (tmp_path / "geometry").mkdir()
    (tmp_path / "geometry" / "results.json").write_text('{"pc1": 0.25, "null": {"pc1": NaN}}')
    os.mkfifo(tmp_path / "extract")  # never opened
    answer = replay.results_answer(tmp_path)
    assert answer["geometry/results.json.pc1"] == 0.25 and np.isnan(answer["geometry/results.json.null.pc1"])


def test_tree_state_sees_links_and_fifos_without_opening_them(tmp_path):
    (tmp_path / "a.json").write_text("{}")
    before = replay.tree_state(tmp_path)
    os.mkfifo(tmp_path / "f")
    (tmp_path / "l").symlink_to("/dev/zero")
    (tmp_path / "a.json").write_text("[]")
    after = replay.tree_state(tmp_path)
    assert sorted(replay.changes(before, after, "t")) == ["t/a.json changed", "t/f created", "t/l created"]
    assert after["l"] == "link to /dev/zero"


# mutations -----------------------------------------------------------------------------------------

RESULTS = json.dumps({"schema_version": 3, "suite": "geometry", "n": 12, "pc1": 0.25}, indent=2) + "\n"


@pytest.mark.parametrize("mutation, expected", [
    ("nan", '"pc1": NaN'), ("1e999", '"pc1": 1e999'), ("unknown-keys", '"zz_unknown_key"'),
    ("future-schema", '"schema_version": 99'), ("lone-surrogate", '"\\ud800geometry"'),
])
def test_json_mutations(mutation, expected):
    assert expected in replay.text_mutation("json", mutation, RESULTS.encode()).decode()


def test_mutations_that_break_the_text():
    assert b"\xff\xfe" in replay.text_mutation("json", "invalid-utf8", RESULTS.encode())
    deep = replay.text_mutation("json", "deep", RESULTS.encode()).decode()
    assert "[" * replay.DEPTH in deep and deep.rstrip().endswith("]}")
    assert replay.text_mutation("toml", "wrong-type", b'a = 1\n') is None
    assert replay.text_mutation("yaml", "nan", b"n_boot: 50\n") == b"n_boot: .nan\n"
    assert replay.text_mutation("txt", "lone-surrogate", b"The cat sat.\n") == b"The \xed\xa0\x80cat sat.\n"


def test_place_mutations_link_outside_into_the_sentinel(tmp_path):
    case, sentinel = tmp_path / "case", tmp_path / "sentinel"
    case.mkdir()
    sentinel.mkdir()
    (case / "results.json").write_text(RESULTS)
    replay.mutate(case / "results.json", "link-outside", sentinel, tmp_path / "M")
    assert (case / "results.json").resolve() == (sentinel / "linked" / "results.json").resolve()
    (case / "meta.json").write_text("{}")
    replay.mutate(case / "meta.json", "fifo", sentinel, tmp_path / "M")
    assert replay.tree_state(case)["meta.json"].startswith("special file")


def test_a_pickled_array_holds_the_payload(tmp_path):
    np.save(tmp_path / "values.npy", np.zeros((3, 2), dtype=np.float32))
    replay.mutate(tmp_path / "values.npy", "pickle", tmp_path, tmp_path / "RAN")
    with pytest.raises(ValueError):
        np.load(tmp_path / "values.npy", allow_pickle=False)
    assert not (tmp_path / "RAN").exists()


def test_the_cases():
    cases = replay.with_baselines(replay.all_cases())
    ids = [case.id for case in cases]
    assert len(ids) == len(set(ids)) and len(ids) >= 150
    assert "run/extract/results.json:nan:report" in ids
    assert cases[0].mutation == "none"  # the references first
    assert {case.command for case in cases} == set(replay.COMMANDS)
    assert replay.expectation("prompts.txt", "truncated", "rerun") == "changed"
    assert replay.expectation("prompts.txt", "invalid-utf8", "validate-txt") == "invalid"


# through the command line ----------------------------------------------------------------------------

@pytest.mark.slow
def test_a_few_cases_end_to_end(tmp_path):
    """The reference run, its undamaged report (ok), a truncated manifest's report (refused in one
    line), a FIFO as the prompt file (refused, not a hang) and the table and counts."""
    out = tmp_path / "table.csv"
    done = subprocess.run([sys.executable, str(SCRIPT), "--out", str(out), "--work", str(tmp_path / "work"),
                           "--only", "run/manifest.json:truncated:report", "--only", "prompts.txt:fifo:validate",
                           "--timeout", "60"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    import csv

    rows = {row["id"]: row for row in csv.DictReader(out.open())}
    assert set(rows) == {"-:none:report", "-:none:validate-txt", "run/manifest.json:truncated:report",
                         "prompts.txt:fifo:validate-txt"}
    assert rows["-:none:report"]["class"] == replay.OK
    assert rows["run/manifest.json:truncated:report"]["class"] == replay.ONE_LINE
    assert "manifest.json" in rows["run/manifest.json:truncated:report"]["first_stderr_line"]
    assert rows["prompts.txt:fifo:validate-txt"]["class"] == replay.ONE_LINE
    assert "4 cases" in done.stdout and "one-line error" in done.stdout
