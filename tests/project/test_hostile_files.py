"""Every file geomprobe reads back, damaged or replaced by a hostile one (issue 28): the CLI answers
with one `error: ...` line naming the file and the fix (exit 2), or recomputes geomprobe's own
derived data with a one-line warning; never a traceback, never code from the file.

Each test makes a real finished run (or training run, or sweep folder), damages one file, runs the
CLI in a subprocess and checks that a marker the hostile payload would create stays absent and that
the directory's other files are byte-for-byte what they were."""

from __future__ import annotations

import json
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.slow  # every test runs the CLI in a subprocess (seconds each)

PROMPTS = "\n".join(f"The cat number {i} sat quietly on the old mat." for i in range(6)) + "\n"
WT_FLAGS = ["--task", "sula", "--steps", "4", "--d-model", "16", "--n-layers", "1", "--n-heads", "2",
            "--batch-size", "8", "--quiet"]


class Payload:
    """Unpickled, it creates `marker`: what a hostile file would do if geomprobe loaded it as a pickle."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return os.system, (f"touch {self.marker}",)


def hostile_pickle(marker: Path) -> bytes:
    return pickle.dumps(Payload(marker))


def cli(*args, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "geomprobe", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def snapshot(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*"))
            if p.is_file() and p.name != ".geomprobe.lock"}


def assert_untouched(before: dict[str, bytes], directory: Path, *changed: str) -> None:
    after = snapshot(directory)
    for name, data in before.items():
        if name in changed:
            continue
        assert name in after, f"{name} was removed"
        assert after[name] == data, f"{name} was rewritten"


def assert_refused(done: subprocess.CompletedProcess, marker: Path, *words: str) -> str:
    """Exit 2 with one `error:` line (a torch warning line may come before it); returns that line."""
    both = done.stdout + done.stderr
    assert "Traceback" not in both, both
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2, both
    assert 1 <= len(lines) <= 3, done.stderr
    error = [line for line in lines if line.startswith("error: ")]
    assert len(error) == 1, done.stderr
    for word in words:
        assert word in error[0], error[0]
    assert not marker.exists(), "the hostile payload ran"
    return error[0]


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory, geomprobe_cache):
    """(prompt file, a finished `geomprobe run --suite extract` directory), to be copied."""
    base = tmp_path_factory.mktemp("hostile-base")
    prompts = base / "prompts.txt"
    prompts.write_text(PROMPTS)
    done = cli("run", "--model", "tiny-neox", "--suite", "extract", "--prompts", prompts, "--out", base / "run",
               cwd=base)
    assert done.returncode == 0, done.stdout + done.stderr
    return prompts, base / "run"


@pytest.fixture
def run_copy(finished_run, tmp_path):
    prompts, run = finished_run
    shutil.copytree(run, tmp_path / "run")
    return prompts, tmp_path / "run"


def _run_args(prompts: Path, run: Path) -> list:
    return ["run", "--model", "tiny-neox", "--suite", "extract", "--prompts", prompts, "--out", run]


# 1 ---------------------------------------------------------------------------------------------

def test_truncated_manifest(run_copy, tmp_path):
    prompts, run = run_copy
    manifest = run / "manifest.json"
    data = manifest.read_bytes()
    manifest.write_bytes(data[: len(data) // 2])
    before = snapshot(run)
    marker = tmp_path / "MARKER"
    assert_refused(cli(*_run_args(prompts, run), cwd=tmp_path), marker, "manifest.json", "--overwrite")
    assert_untouched(before, run)
    assert_refused(cli("report", run, cwd=tmp_path), marker, "manifest.json", "--overwrite")
    assert_untouched(before, run)


# 2 ---------------------------------------------------------------------------------------------

def test_empty_results(run_copy, tmp_path):
    prompts, run = run_copy
    (run / "extract" / "results.json").write_bytes(b"")
    before = snapshot(run)
    marker = tmp_path / "MARKER"
    for command in ("report", "compare"):
        line = assert_refused(cli(command, run, cwd=tmp_path), marker, "extract/results.json",
                              "geomprobe run --suite extract")
        assert "damaged" in line
        assert_untouched(before, run)


# 3 ---------------------------------------------------------------------------------------------

def test_object_array_in_place_of_values(run_copy, tmp_path):
    prompts, run = run_copy
    marker = tmp_path / "MARKER"
    values = run / "extraction" / "values.npy"
    shape = np.load(values).shape
    np.save(values, np.array([Payload(marker), 1], dtype=object), allow_pickle=True)
    assert not marker.exists()
    before = snapshot(run)
    # the report draws the extract suite from its results.json: the arrays are not read
    done = cli("report", run, cwd=tmp_path)
    assert done.returncode == 0 and "Traceback" not in done.stdout + done.stderr, done.stdout + done.stderr
    assert not marker.exists(), "the hostile payload ran"
    assert_untouched(before, run)
    # a rerun finds the finished extraction damaged: one warning line, computed again
    done = cli(*_run_args(prompts, run), cwd=tmp_path)
    both = done.stdout + done.stderr
    assert done.returncode == 0 and "Traceback" not in both, both
    warnings = [line for line in done.stderr.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 1 and "values.npy" in warnings[0] and "computing it again" in warnings[0], done.stderr
    assert not marker.exists(), "the hostile payload ran"
    recomputed = np.load(values)  # allow_pickle=False: plain numbers again
    assert recomputed.dtype == np.float32 and recomputed.shape == shape
    assert_untouched(before, run, "manifest.json", "extract/results.json", "run.json",
                     *(name for name in before if name.startswith("extraction/")))


# 4 ---------------------------------------------------------------------------------------------

def test_hostile_weights_in_a_local_model(finished_run, tmp_path, load_tiny):
    prompts, _ = finished_run
    loaded = load_tiny("tiny-neox")
    folder = tmp_path / "model"
    loaded.model.config.save_pretrained(folder)
    loaded.tokenizer.save_pretrained(folder)
    marker = tmp_path / "MARKER"
    (folder / "pytorch_model.bin").write_bytes(hostile_pickle(marker))
    before = snapshot(folder)
    done = cli("run", "--model", folder, "--suite", "extract", "--prompts", prompts, "--out", tmp_path / "out",
               cwd=tmp_path)
    assert_refused(done, marker, "pytorch_model.bin", "replace them")
    assert_untouched(before, folder)


# 5 ---------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def trained(tmp_path_factory, geomprobe_cache):
    base = tmp_path_factory.mktemp("hostile-windtunnel")
    done = cli("windtunnel", "train", *WT_FLAGS, "--out", base / "wt", cwd=base)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (base / "wt" / "checkpoints" / "step-0000003.pt").exists()
    return base / "wt"


def test_hostile_training_checkpoint(trained, finished_run, tmp_path):
    prompts, _ = finished_run
    wt = tmp_path / "wt"
    shutil.copytree(trained, wt)
    marker = tmp_path / "MARKER"
    (wt / "checkpoints" / "step-0000003.pt").write_bytes(hostile_pickle(marker))
    before = snapshot(wt)
    done = cli("run", "--model", f"{wt}@step-3", "--suite", "extract", "--prompts", prompts,
               "--out", tmp_path / "out", cwd=tmp_path)
    assert_refused(done, marker, "step-0000003.pt", "windtunnel train")
    assert_untouched(before, wt)


def test_hostile_training_state(trained, tmp_path):
    wt = tmp_path / "wt"
    shutil.copytree(trained, wt)
    marker = tmp_path / "MARKER"
    (wt / "checkpoints" / "state.pt").write_bytes(hostile_pickle(marker))
    before = snapshot(wt)
    done = cli("windtunnel", "train", *WT_FLAGS, "--out", wt, "--resume", cwd=tmp_path)
    assert_refused(done, marker, "state.pt", "--overwrite")
    assert_untouched(before, wt)


# 6 ---------------------------------------------------------------------------------------------

def test_hostile_submitit_pickles_in_a_sweep(finished_run, tmp_path):
    prompts, _ = finished_run
    out = tmp_path / "sweep"
    done = cli("sweep", "--models", "tiny-neox", "--suites", "extract", "--prompts", prompts, "--out", out,
               "--executor", "inline", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    marker = tmp_path / "MARKER"
    logs = out / "logs"
    (logs / "4242_0_0_result.pkl").write_bytes(hostile_pickle(marker))
    (logs / "4242_0_result.pkl").write_bytes(hostile_pickle(marker)[:7])  # truncated
    for result in logs.glob("result-*.json"):  # the job's own result, replaced by a pickle
        result.write_bytes(hostile_pickle(marker))
    before = snapshot(out)
    for extra in ([], ["--json"]):
        done = cli("sweep", "--status", out, *extra, cwd=tmp_path)
        both = done.stdout + done.stderr
        assert done.returncode == 0 and "Traceback" not in both, both
        assert not [line for line in done.stderr.splitlines() if line.strip()], done.stderr
        assert not marker.exists(), "the hostile payload ran"
        assert_untouched(before, out)
    assert json.loads(done.stdout)  # --json: still a readable status
