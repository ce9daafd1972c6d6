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
import stat
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


def cli(*args, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "COLUMNS": "200"}
    try:
        return subprocess.run([sys.executable, "-m", "geomprobe", *map(str, args)], cwd=cwd, env=env,
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:  # killed: a hang fails the test instead of blocking it
        pytest.fail(f"geomprobe {' '.join(map(str, args))} was still running after {timeout:.0f} s (blocked?)")


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


# ------------------------------------------------------------------------------------------------
# issue 43: every case it listed, each through the command line as a user meets it


def _warnings(done: subprocess.CompletedProcess) -> list[str]:
    return [line for line in done.stderr.splitlines() if line.startswith("warning: ")]


def assert_recomputed(done: subprocess.CompletedProcess, *words: str) -> None:
    """Exit 0, no traceback, exactly one warning line holding every word."""
    both = done.stdout + done.stderr
    assert done.returncode == 0 and "Traceback" not in both, both
    warnings = _warnings(done)
    assert len(warnings) == 1, done.stderr
    for word in words:
        assert word in warnings[0], warnings[0]


@pytest.mark.parametrize("name", ["meta.json", "request.json"])
def test_truncated_extraction_metadata_is_computed_again(run_copy, tmp_path, name):
    prompts, run = run_copy
    damaged = run / "extraction" / name
    data = damaged.read_bytes()
    damaged.write_bytes(data[: len(data) // 2])
    done = cli(*_run_args(prompts, run), cwd=tmp_path)
    assert_recomputed(done, f"extraction/{name}", "damaged", "computing it again")
    assert json.loads(damaged.read_text())  # whole again
    again = cli(*_run_args(prompts, run), cwd=tmp_path)  # and a rerun finds it finished
    assert again.returncode == 0 and not _warnings(again), again.stderr


def test_invalid_extraction_meta_is_computed_again(run_copy, tmp_path):
    prompts, run = run_copy
    meta = run / "extraction" / "meta.json"
    meta.write_text(json.dumps({**json.loads(meta.read_text()), "layers": "all", "shapes": {"../../x": [1]}}))
    assert_recomputed(cli(*_run_args(prompts, run), cwd=tmp_path), "meta.json", "layers")
    assert isinstance(json.loads(meta.read_text())["layers"], list)


def test_a_suite_folder_linked_outside_the_run(run_copy, tmp_path):
    """The issue's exact case: rm -r RUN/extract; ln -s $PWD/out RUN/extract; geomprobe run --model
    tiny-neox --seed 1 --overwrite --out RUN: under --overwrite the link is replaced by a folder of
    the run's own (one warning line) and nothing is written to out/; without it, refused in one line."""
    prompts, run = run_copy
    out = tmp_path / "out"
    out.mkdir()
    (out / "mine.txt").write_text("keep")
    shutil.rmtree(run / "extract")
    (run / "extract").symlink_to(out, target_is_directory=True)
    marker = tmp_path / "MARKER"
    assert_refused(cli(*_run_args(prompts, run), cwd=tmp_path), marker, "extract is a symbolic link",
                   "--overwrite")
    assert sorted(p.name for p in out.iterdir()) == ["mine.txt"]
    done = cli("run", "--model", "tiny-neox", "--seed", "1", "--overwrite", "--prompts", prompts, "--out", run,
               cwd=tmp_path)
    assert_recomputed(done, "symbolic link", str(out), "left as it is")
    assert sorted(p.name for p in out.iterdir()) == ["mine.txt"] and (out / "mine.txt").read_text() == "keep"
    assert (run / "extract").is_dir() and not (run / "extract").is_symlink()
    assert json.loads((run / "extract" / "results.json").read_text())["suite"] == "extract"


def test_an_extraction_folder_linked_outside_the_run_is_refused(run_copy, tmp_path):
    prompts, run = run_copy
    out = tmp_path / "arrays"
    shutil.move(run / "extraction", out)
    (run / "extraction").symlink_to(out, target_is_directory=True)
    before = snapshot(out)
    assert_refused(cli(*_run_args(prompts, run), cwd=tmp_path), tmp_path / "MARKER", "extraction is a symbolic link")
    assert snapshot(out) == before


def _deep_results(run: Path, depth: int = 100_000) -> None:
    path = run / "extract" / "results.json"
    text = path.read_text().rstrip().removesuffix("}")
    path.write_text(text + ', "deep": ' + "[" * depth + "]" * depth + "}\n")


def test_a_deep_results_file(run_copy, tmp_path):
    prompts, run = run_copy
    _deep_results(run)
    before = snapshot(run)
    marker = tmp_path / "MARKER"
    for command in ("report", "compare"):
        assert_refused(cli(command, run, cwd=tmp_path), marker, "extract/results.json", "deep",
                       "geomprobe run --suite extract")
        assert_untouched(before, run)
    done = cli(*_run_args(prompts, run), cwd=tmp_path)  # the suite is run again and writes it whole
    assert done.returncode == 0 and "Traceback" not in done.stdout + done.stderr, done.stderr
    assert "deep" not in json.loads((run / "extract" / "results.json").read_text())


def test_deep_and_endless_config_files(finished_run, tmp_path):
    prompts, _ = finished_run
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 200_000 + "]" * 200_000)
    marker = tmp_path / "MARKER"
    args = ["run", "--model", "tiny-neox", "--suite", "extract", "--prompts", prompts, "--out", tmp_path / "r"]
    assert_refused(cli(*args, "--config", deep, cwd=tmp_path), marker, "--config", "deep.json", "deep")
    nested = tmp_path / "nested.yaml"
    nested.write_text("a: " + "[" * 100_000 + "\n")
    assert_refused(cli(*args, "--config", nested, cwd=tmp_path), marker, "--config", "nested.yaml", "deep")
    assert_refused(cli(*args, "--config", "/dev/zero", cwd=tmp_path), marker, "--config /dev/zero",
                   "character device")
    fifo = tmp_path / "config.json"
    os.mkfifo(fifo)
    assert_refused(cli(*args, "--config", fifo, cwd=tmp_path), marker, "FIFO")
    assert_refused(cli(*args, "--config", '{"alpha": 0.8}', cwd=tmp_path), marker, "takes a file, not JSON text")
    assert not (tmp_path / "r").exists()


def test_a_lone_surrogate_in_a_prompt_file(tmp_path):
    prompts = tmp_path / "p.jsonl"
    prompts.write_text('{"id": "a", "text": "The cat sat on the mat."}\n{"id": "b", "text": "bad \\ud800 text"}\n')
    marker = tmp_path / "MARKER"
    assert_refused(cli("prompts", "validate", prompts, cwd=tmp_path), marker, "p.jsonl line 2", "surrogate")
    assert_refused(cli("run", "--model", "tiny-neox", "--suite", "extract", "--prompts", prompts, "--out",
                       tmp_path / "r", cwd=tmp_path), marker, "p.jsonl line 2", "surrogate")


def test_prompt_files_that_are_devices_or_fifos(tmp_path):
    marker = tmp_path / "MARKER"
    assert_refused(cli("run", "--model", "tiny-neox", "--prompts", "/dev/zero", "--out", tmp_path / "r", cwd=tmp_path),
                   marker, "/dev/zero", "character device")
    fifo = tmp_path / "prompts.jsonl"
    os.mkfifo(fifo)
    assert_refused(cli("prompts", "validate", fifo, cwd=tmp_path), marker, "FIFO")


def test_a_manifest_linked_to_dev_zero(run_copy, tmp_path):
    prompts, run = run_copy
    (run / "manifest.json").unlink()
    (run / "manifest.json").symlink_to("/dev/zero")
    marker = tmp_path / "MARKER"
    assert_refused(cli("report", run, cwd=tmp_path), marker, "manifest.json", "character device")
    assert_refused(cli(*_run_args(prompts, run), cwd=tmp_path), marker, "manifest.json", "character device")


def test_the_config_check_reads_the_suite_flag(tmp_path):
    config = tmp_path / "c.json"
    config.write_text('{"alpha": 0.8}')
    done = cli("plan", "--model", "tiny-neox", "--suite", "sula", "--config", config, "--json", cwd=tmp_path)
    assert done.returncode == 0 and "not of extract" not in done.stdout + done.stderr, done.stderr
    marker = tmp_path / "MARKER"
    assert_refused(cli("extract", "--model", "tiny-neox", "--config", config, cwd=tmp_path), marker,
                   "alpha is an option of the sula", "not of extract")


@pytest.fixture(scope="module")
def finished_sweep(tmp_path_factory, finished_run):
    prompts, _ = finished_run
    base = tmp_path_factory.mktemp("hostile-sweep")
    done = cli("sweep", "--models", "tiny-neox", "--suites", "extract", "--prompts", prompts, "--out", base / "sweep",
               "--executor", "inline", cwd=base)
    assert done.returncode == 0, done.stdout + done.stderr
    return base / "sweep"


@pytest.mark.parametrize("jobs, words", [
    ([{}, 5], "jobs[0].name"),
    ("run_dir /etc", "outside the sweep directory"),
    ("run_dir 5", "run_dir"),
])
def test_damaged_sweep_records(finished_sweep, tmp_path, jobs, words):
    out = tmp_path / "sweep"
    shutil.copytree(finished_sweep, out)
    record = json.loads((out / "sweep.json").read_text())
    if isinstance(jobs, str):
        record["jobs"][0]["run_dir"] = "/etc" if jobs.endswith("/etc") else 5
    else:
        record["jobs"] = jobs
    (out / "sweep.json").write_text(json.dumps(record))
    marker = tmp_path / "MARKER"
    assert_refused(cli("sweep", "--status", out, cwd=tmp_path), marker, "sweep.json", words, "rerun the sweep")
    done = cli("sweep", "--status", out, "--json", cwd=tmp_path)
    assert_refused(done, marker, "sweep.json", words)
    answer = json.loads(done.stdout)
    assert answer["kind"] == "RunDirectoryError" and answer["exit_code"] == 2 and words in answer["error"]


def test_a_training_state_that_is_a_fifo(trained, tmp_path):
    wt = tmp_path / "wt"
    shutil.copytree(trained, wt)
    (wt / "checkpoints" / "state.pt").unlink()
    os.mkfifo(wt / "checkpoints" / "state.pt")
    done = cli("windtunnel", "train", *WT_FLAGS, "--out", wt, "--resume", cwd=tmp_path)
    assert_refused(done, tmp_path / "MARKER", "state.pt", "FIFO", "--overwrite")


# ------------------------------------------------------------------------------------------------
# issue 43, the gaps that remained: writes of training, sweeps and reports kept where they belong, a
# local model folder's files checked before transformers opens them, a damaged results.json said


def test_training_folders_linked_outside_the_output_directory(tmp_path):
    """A half-trained run whose checkpoints/ was moved elsewhere and linked back: --resume is refused
    in one line and nothing is written there; a config.json linked to a file outside is replaced by
    the run's own, never written through; --overwrite replaces the linked folder (one warning line)."""
    wt, marker = tmp_path / "wt", tmp_path / "MARKER"
    done = cli("windtunnel", "train", *WT_FLAGS, "--until", "2", "--out", wt, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    elsewhere = tmp_path / "elsewhere"
    shutil.move(wt / "checkpoints", elsewhere)
    (wt / "checkpoints").symlink_to(elsewhere, target_is_directory=True)
    before = snapshot(elsewhere)
    resume = ["windtunnel", "train", *WT_FLAGS, "--out", wt, "--resume"]
    assert_refused(cli(*resume, cwd=tmp_path), marker, "checkpoints is a symbolic link", str(elsewhere),
                   "--overwrite")
    assert snapshot(elsewhere) == before

    (wt / "checkpoints").unlink()
    shutil.move(elsewhere, wt / "checkpoints")
    mine = tmp_path / "mine.json"
    mine.write_text("keep")
    (wt / "config.json").symlink_to(mine)
    done = cli(*resume, cwd=tmp_path)
    assert done.returncode == 0 and "Traceback" not in done.stdout + done.stderr, done.stdout + done.stderr
    assert mine.read_text() == "keep"
    assert not (wt / "config.json").is_symlink() and json.loads((wt / "config.json").read_text())["model_type"]

    shutil.move(wt / "checkpoints", elsewhere)
    (wt / "checkpoints").symlink_to(elsewhere, target_is_directory=True)
    before = snapshot(elsewhere)
    loud = [flag for flag in WT_FLAGS if flag != "--quiet"]  # --quiet silences warnings too
    done = cli("windtunnel", "train", *loud, "--out", wt, "--overwrite", cwd=tmp_path)
    assert_recomputed(done, "checkpoints was a symbolic link", str(elsewhere), "left as it is")
    assert snapshot(elsewhere) == before
    assert (wt / "checkpoints").is_dir() and not (wt / "checkpoints").is_symlink()
    assert (wt / "checkpoints" / "step-0000003.pt").is_file() and (wt / "metrics.json").is_file()


@pytest.mark.parametrize("linked", ["runs", "logs", "runs/tiny-neox@main"])  # the last: the job's run directory
def test_sweep_folders_linked_outside_the_sweep(finished_run, tmp_path, linked):
    prompts, _ = finished_run
    out, elsewhere = tmp_path / "sweep", tmp_path / "elsewhere"
    elsewhere.mkdir()
    (out / linked).parent.mkdir(parents=True)
    (out / linked).symlink_to(elsewhere, target_is_directory=True)
    done = cli("sweep", "--models", "tiny-neox", "--suites", "extract", "--prompts", prompts, "--out", out,
               "--executor", "inline", cwd=tmp_path)
    assert_refused(done, tmp_path / "MARKER", f"{linked} is a symbolic link", str(elsewhere), "remove the link")
    assert not list(elsewhere.iterdir())
    assert not (out / "sweep.json").exists()


def test_a_report_file_that_is_a_link_a_fifo_a_device_or_a_folder(run_copy, tmp_path):
    """-o FILE is written atomically (a temporary beside it, then renamed) and never through a link:
    a link there is refused in one line, naming its target; a FIFO, a device or a folder too, before
    anything is written."""
    _, run = run_copy
    marker = tmp_path / "MARKER"
    mine = tmp_path / "mine.html"
    mine.write_text("keep")
    link = tmp_path / "report.html"
    link.symlink_to(mine)
    assert_refused(cli("report", run, "-o", link, cwd=tmp_path), marker, "-o", "symbolic link", str(mine))
    assert mine.read_text() == "keep" and link.is_symlink()
    fifo = tmp_path / "fifo.html"
    os.mkfifo(fifo)
    assert_refused(cli("report", run, "-o", fifo, cwd=tmp_path, timeout=120), marker, "-o", "FIFO")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    folder = tmp_path / "folder.html"
    folder.mkdir()
    assert_refused(cli("report", run, "-o", folder, cwd=tmp_path), marker, "-o", "is a directory")
    if os.geteuid() == 0:  # a device node of our own (only root makes one): were it replaced, nothing is lost
        device = tmp_path / "null"
        os.mknod(device, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        assert_refused(cli("report", run, "-o", device, cwd=tmp_path), marker, "-o", "character device")
        assert stat.S_ISCHR(os.lstat(device).st_mode)
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".geomprobe-tmp")]
    done = cli("report", run, "-o", tmp_path / "fine.html", cwd=tmp_path)
    assert done.returncode == 0 and (tmp_path / "fine.html").read_text().startswith("<!"), done.stderr


@pytest.fixture(scope="module")
def saved_model(tmp_path_factory, load_tiny):
    """A tiny model's folder as save_pretrained writes it (config, safetensors weights, tokenizer)."""
    loaded = load_tiny("tiny-neox")
    folder = tmp_path_factory.mktemp("saved-model") / "model"
    loaded.model.save_pretrained(folder)
    loaded.tokenizer.save_pretrained(folder)
    return folder


def test_a_model_folder_of_links_to_blobs_loads(saved_model, tmp_path):
    """The Hugging Face cache's layout: a snapshot folder whose files are symbolic links to blobs."""
    from geomprobe.models import load_model

    blobs, snapshot_dir = tmp_path / "blobs", tmp_path / "snapshot"
    blobs.mkdir()
    snapshot_dir.mkdir()
    for path in saved_model.iterdir():
        shutil.copy(path, blobs / path.name)
        (snapshot_dir / path.name).symlink_to(blobs / path.name)
    loaded = load_model(str(snapshot_dir), device="cpu")
    assert loaded.tokenizer("The cat sat.")["input_ids"]


@pytest.mark.parametrize("name", ["model.safetensors", "tokenizer.json", "config.json"])
def test_a_model_file_that_is_a_fifo(saved_model, finished_run, tmp_path, name):
    """transformers would block opening it for ever: refused in one line before anything is loaded."""
    prompts, _ = finished_run
    folder = tmp_path / "model"
    shutil.copytree(saved_model, folder)
    (folder / name).unlink()
    os.mkfifo(folder / name)
    done = cli("run", "--model", folder, "--suite", "extract", "--prompts", prompts, "--out", tmp_path / "out",
               cwd=tmp_path, timeout=90)
    assert_refused(done, tmp_path / "MARKER", name, "FIFO")
    assert not (tmp_path / "out").exists()


def test_a_damaged_results_file_is_computed_again(run_copy, tmp_path):
    prompts, run = run_copy
    results = run / "extract" / "results.json"
    data = results.read_bytes()
    results.write_bytes(data[: len(data) // 2])
    done = cli(*_run_args(prompts, run), cwd=tmp_path)
    assert_recomputed(done, "extract/results.json", "damaged", "computing it again")
    assert json.loads(results.read_text())["suite"] == "extract"
    again = cli(*_run_args(prompts, run), cwd=tmp_path)
    assert again.returncode == 0 and not _warnings(again), again.stderr
    results.unlink()  # gone, not damaged: said too
    gone = cli(*_run_args(prompts, run), cwd=tmp_path)
    assert_recomputed(gone, "extract/results.json", "is missing", "computing it again")
    assert json.loads(results.read_text())["suite"] == "extract"


# issue 43: files edited into plausible but wrong content (the sha256 geomprobe recorded as it wrote them)

GEOMETRY_ARGS = ["--suite", "geometry", "--seed", "1", "--limit", "12", "--null", "init:2", "--n-boot", "50",
                 "--init-seeds", "1", "--n-null", "10", "--n-per-quintile", "0", "--step0", "off"]
EDITED = "__edited_number__"


def edit_first_number(path: Path, token: str) -> None:
    """Write the first float of a JSON file (breadth first) as `token` (NaN, Infinity, 1e999, 0.5)."""
    data = json.loads(path.read_text())
    queue, where = [(data, ())], None
    while queue and where is None:
        item, keys = queue.pop(0)
        if isinstance(item, float):
            where = keys
        elif isinstance(item, dict):
            queue += [(value, (*keys, key)) for key, value in item.items()]
        elif isinstance(item, list):
            queue += [(value, (*keys, i)) for i, value in enumerate(item)]
    holder = data
    for key in where[:-1]:
        holder = holder[key]
    holder[where[-1]] = EDITED
    path.write_text(json.dumps(data, indent=2).replace(f'"{EDITED}"', token, 1))


def add_noise(path: Path) -> None:
    """The array with seeded noise of half its spread (an integer array: every count one more)."""
    array = np.load(path)
    if array.dtype.kind == "f":
        edited = array + 0.5 * float(array.std()) * np.random.default_rng(0).standard_normal(array.shape)
    else:
        edited = array + 1
    np.save(path, edited.astype(array.dtype))


def assert_one_line_naming(done: subprocess.CompletedProcess, *words: str) -> str:
    """Exit 0, no traceback, one line on stderr holding every word; returns it."""
    both = done.stdout + done.stderr
    assert done.returncode == 0 and "Traceback" not in both, both
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


LOAD_RUN = "import sys, geomprobe; geomprobe.load_run(sys.argv[1])"
LOAD_EXTRACTION = "import sys, geomprobe; geomprobe.load_extraction(sys.argv[1])"


@pytest.mark.parametrize("token", ["NaN", "Infinity", "1e999", "0.5"])
def test_an_edited_results_number_is_computed_again(run_copy, tmp_path, token):
    prompts, run = run_copy
    results = run / "extract" / "results.json"
    reference = json.loads(results.read_text())
    edit_first_number(results, token)
    done = cli(*_run_args(prompts, run), cwd=tmp_path)
    assert_recomputed(done, f"{run}/extract/results.json changed since geomprobe wrote it",
                      "(sha256 differs from manifest.json): computing it again")
    assert json.loads(results.read_text()) == reference
    again = cli(*_run_args(prompts, run), cwd=tmp_path)
    assert again.returncode == 0 and not _warnings(again), again.stderr


def test_readers_say_that_results_were_edited(run_copy, tmp_path):
    """report, compare and load_run show the edited numbers (a run folder may be put together by
    hand), with one warning line naming the file; the run is left as it is."""
    prompts, run = run_copy
    results = run / "extract" / "results.json"
    edit_first_number(results, "NaN")
    before = snapshot(run)
    said = f"{results} changed since geomprobe wrote it (sha256 differs from manifest.json): its numbers are the " \
           "edited ones"
    line = assert_one_line_naming(cli("report", run, "-o", tmp_path / "report.html", cwd=tmp_path), said)
    assert line.startswith("warning: ")
    assert "changed since geomprobe wrote it" in (tmp_path / "report.html").read_text()  # the page says it too
    line = assert_one_line_naming(cli("compare", run, run, "-o", tmp_path / "table", cwd=tmp_path), said)
    assert line.startswith("warning: ")
    done = subprocess.run([sys.executable, "-c", LOAD_RUN, str(run)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert_one_line_naming(done, said)
    assert_untouched(before, run)


@pytest.fixture(scope="module")
def finished_geometry(tmp_path_factory, geomprobe_cache):
    """(prompt file, a finished `geomprobe run --suite geometry` directory at test sizes, with two
    untrained copies), to be copied."""
    base = tmp_path_factory.mktemp("hostile-geometry")
    prompts = base / "prompts.txt"
    prompts.write_text("\n".join(f"The cat number {i} sat quietly on the old mat." for i in range(12)) + "\n")
    done = cli("run", "--model", "tiny-neox", *GEOMETRY_ARGS, "--prompts", prompts, "--out", base / "run", cwd=base)
    assert done.returncode == 0, done.stdout + done.stderr
    return prompts, base / "run"


def _pc1(run: Path) -> float:
    return json.loads((run / "geometry" / "results.json").read_text())["value_manifold"]["pc1"]


@pytest.mark.parametrize("array", ["geometry/extraction/values.npy", "geometry/nulls/init-2000/extraction/values.npy"])
def test_edited_values_of_an_unfinished_suite_are_computed_again(finished_geometry, tmp_path, array):
    from conftest import unfinish

    prompts, reference = finished_geometry
    run = tmp_path / "run"
    shutil.copytree(reference, run)
    unfinish(run, "geometry")
    add_noise(run / array)
    done = cli("run", "--model", "tiny-neox", *GEOMETRY_ARGS, "--prompts", prompts, "--out", run, cwd=tmp_path)
    assert_recomputed(done, f"{run / array} changed since geomprobe wrote it (sha256 differs from meta.json): "
                      "computing the extraction again")
    assert _pc1(run) == pytest.approx(_pc1(reference), rel=1e-9, abs=0)


def test_load_extraction_says_which_arrays_were_edited(run_copy, tmp_path):
    prompts, run = run_copy
    extraction = run / "extraction"
    reference = np.load(extraction / "values.npy")
    add_noise(extraction / "values.npy")
    add_noise(extraction / "n_tokens.npy")
    before = snapshot(run)
    done = subprocess.run([sys.executable, "-c", LOAD_EXTRACTION, str(extraction)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    both = done.stdout + done.stderr
    assert done.returncode == 0 and "Traceback" not in both, both
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 2, done.stderr
    for line, name in zip(lines, ("n_tokens.npy", "values.npy")):
        assert f"{extraction / name} changed since geomprobe wrote it (sha256 differs from meta.json): its values " \
               "are the edited ones" in line, line
    assert_untouched(before, run)
    done = cli(*_run_args(prompts, run), cwd=tmp_path)  # a rerun computes the extraction again
    assert_recomputed(done, "extraction/n_tokens.npy changed since geomprobe wrote it", "computing the extraction again")
    np.testing.assert_allclose(np.load(extraction / "values.npy"), reference, rtol=0, atol=1e-6)


def test_a_run_written_without_hashes_reads_without_a_warning(run_copy, tmp_path):
    """A run directory of a geomprobe that recorded no sha256 (the keys deleted here) is read unchecked."""
    prompts, run = run_copy
    manifest = json.loads((run / "manifest.json").read_text())
    assert all("results_sha256" in entry for entry in manifest["suites"].values())
    for entry in manifest["suites"].values():
        del entry["results_sha256"]
    (run / "manifest.json").write_text(json.dumps(manifest, indent=2))
    meta = json.loads((run / "extraction" / "meta.json").read_text())
    assert sorted(meta.pop("array_files")) == sorted(p.name for p in (run / "extraction").glob("*.npy"))
    (run / "extraction" / "meta.json").write_text(json.dumps(meta, indent=2))
    edit_first_number(run / "extract" / "results.json", "0.5")  # nothing recorded to tell
    for done in (cli("report", run, "-o", tmp_path / "report.html", cwd=tmp_path),
                 cli("compare", run, cwd=tmp_path),
                 subprocess.run([sys.executable, "-c", LOAD_RUN, str(run)], cwd=tmp_path, capture_output=True,
                                text=True, timeout=300),
                 subprocess.run([sys.executable, "-c", LOAD_EXTRACTION, str(run / "extraction")], cwd=tmp_path,
                                capture_output=True, text=True, timeout=300),
                 cli(*_run_args(prompts, run), cwd=tmp_path)):
        assert done.returncode == 0 and "changed since" not in done.stderr and not _warnings(done), done.stderr


# ------------------------------------------------------------------------------------------------
# the hostile replay's gaps (scripts/hostile_replay.py): a folder where geomprobe writes a file, empty
# and non-regular arrays, a sweep job's damaged manifest, NaN and Infinity in results.json


@pytest.mark.parametrize("name", ["extract/results.json", "run.json", "extraction/values.npy"])
def test_a_folder_where_the_run_writes_a_file_is_refused_before_any_suite(run_copy, tmp_path, name):
    """Refused in one line before any suite runs, with and without --overwrite, the folder and what
    it holds left as they are; once it is removed the same command finishes the run."""
    prompts, run = run_copy
    folder = run / name
    folder.unlink()
    folder.mkdir()
    (folder / "mine.txt").write_text("keep")
    before = snapshot(run)
    marker = tmp_path / "MARKER"
    for extra in ([], ["--overwrite"]):
        line = assert_refused(cli(*_run_args(prompts, run), *extra, cwd=tmp_path, timeout=120), marker,
                              f"{run / name} is a folder where geomprobe writes a file", f"rm -r {run / name}")
        assert "suite" not in line, line  # refused before the suites, not as one's failure
        assert_untouched(before, run)
        assert (folder / "mine.txt").read_text() == "keep"
    shutil.rmtree(folder)
    done = cli(*_run_args(prompts, run), cwd=tmp_path, timeout=120)
    assert done.returncode == 0 and "Traceback" not in done.stdout + done.stderr, done.stderr
    assert folder.is_file()


def test_a_folder_in_place_of_the_sweep_record_is_refused(finished_sweep, finished_run, tmp_path):
    prompts, _ = finished_run
    out = tmp_path / "sweep"
    shutil.copytree(finished_sweep, out)
    (out / "sweep.json").unlink()
    (out / "sweep.json").mkdir()
    (out / "sweep.json" / "mine.txt").write_text("keep")
    spec = tmp_path / "sweep.toml"
    spec.write_text(f'models = ["tiny-neox"]\nsuites = "extract"\nout = "{out}"\nexecutor = "inline"\n\n'
                    f'[options]\nprompts = "{prompts}"\n')
    done = cli("sweep", "--file", spec, "--quiet", cwd=tmp_path, timeout=120)
    assert_refused(done, tmp_path / "MARKER", f"{out / 'sweep.json'} is a folder where geomprobe writes a file",
                   "rm -r")
    assert (out / "sweep.json" / "mine.txt").read_text() == "keep"


LOAD_EXTRACTION = """\
import sys
import geomprobe
from geomprobe.errors import GeomprobeError
try:
    print(sorted(geomprobe.load_extraction(sys.argv[1]).arrays))
except GeomprobeError as error:
    sys.exit(f"error: {error}")
"""


def _replace(path: Path, how: str) -> None:
    path.unlink()
    if how == "empty":
        path.write_bytes(b"")
    elif how == "fifo":
        os.mkfifo(path)
    else:  # a link to a device
        path.symlink_to("/dev/zero")


@pytest.mark.parametrize("name, how, words", [
    ("values.npy", "empty", "an empty file"),
    ("values.npy", "fifo", "FIFO"),
    ("n_tokens.npy", "fifo", "FIFO"),
    ("values.npy", "dev-zero", "character device"),
])
def test_load_extraction_refuses_an_empty_or_non_regular_array(run_copy, tmp_path, name, how, words):
    _, run = run_copy
    _replace(run / "extraction" / name, how)
    try:
        done = subprocess.run([sys.executable, "-c", LOAD_EXTRACTION, run / "extraction"], cwd=tmp_path,
                              capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail(f"load_extraction still reading {name} ({how}) after 60 s (blocked?)")
    both = done.stdout + done.stderr
    assert done.returncode == 1 and "Traceback" not in both, both
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and f"extraction/{name}" in lines[0] and words in lines[0], done.stderr
    assert "the extraction is damaged" in lines[0], lines[0]


@pytest.mark.parametrize("name", ["values.npy", "n_tokens.npy"])
def test_a_fifo_array_is_computed_again_on_a_rerun(run_copy, tmp_path, name):
    prompts, run = run_copy
    array = run / "extraction" / name
    expected = np.load(array)
    _replace(array, "fifo")
    done = cli(*_run_args(prompts, run), cwd=tmp_path, timeout=120)
    assert_recomputed(done, f"extraction/{name}", "FIFO", "computing it again")
    assert array.is_file() and not array.is_symlink()
    np.testing.assert_array_equal(np.load(array), expected)


@pytest.mark.parametrize("how", ["truncated", "empty", "wrong-type", "folder", "fifo", "dev-zero"])
def test_sweep_status_says_a_job_manifest_is_damaged(finished_sweep, tmp_path, how):
    """--status and --status --json: the job is `damaged`, with the reader's line naming its
    manifest.json (never `pending`, as if nothing had run)."""
    out = tmp_path / "sweep"
    shutil.copytree(finished_sweep, out)
    manifest = next(out.glob("runs/*/manifest.json"))
    data = manifest.read_bytes()
    manifest.unlink()
    if how == "truncated":
        manifest.write_bytes(data[: len(data) // 2])
    elif how == "empty":
        manifest.write_bytes(b"")
    elif how == "wrong-type":
        manifest.write_text("[1, 2]")
    elif how == "folder":
        manifest.mkdir()
    elif how == "fifo":
        os.mkfifo(manifest)
    else:
        manifest.symlink_to("/dev/zero")
    done = cli("sweep", "--status", out, "--json", cwd=tmp_path, timeout=60)
    assert done.returncode == 0 and "Traceback" not in done.stdout + done.stderr, done.stdout + done.stderr
    answer = json.loads(done.stdout)
    assert answer["totals"] == {"done": 0, "running": 0, "failed": 0, "pending": 0, "damaged": 1}
    (job,) = answer["jobs"]
    assert job["state"] == "damaged", job
    assert str(manifest) in job["detail"] and "rerun the sweep" in job["detail"], job["detail"]
    table = cli("sweep", "--status", out, cwd=tmp_path, timeout=60)
    assert table.returncode == 0 and "Traceback" not in table.stdout + table.stderr, table.stderr
    assert "1 damaged" in table.stdout and "manifest.json" in table.stdout, table.stdout


def test_compare_keeps_nan_and_infinite_numbers(run_copy, tmp_path):
    """A NaN or Infinity in results.json is a row like any other (nan / inf in the CSV, NaN /
    Infinity in the JSON), and a note names the file; no row is dropped."""
    _, run = run_copy
    assert cli("compare", run, "-o", tmp_path / "clean", cwd=tmp_path).returncode == 0
    results = run / "extract" / "results.json"
    data = json.loads(results.read_text())
    data["layers"][0]["attn_entropy_bits"] = float("nan")
    data["layers"][1]["attn_entropy_bits"] = float("inf")
    results.write_text(json.dumps(data))  # Python's json writes NaN and Infinity
    done = cli("compare", run, "-o", tmp_path / "table", cwd=tmp_path)
    assert done.returncode == 0 and "Traceback" not in done.stdout + done.stderr, done.stderr
    clean, table = (json.loads((tmp_path / f"{name}.json").read_text()) for name in ("clean", "table"))
    assert [row["statistic"] for row in table["rows"]] == [row["statistic"] for row in clean["rows"]]
    values = [row["value"] for row in table["rows"] if isinstance(row["value"], float)]
    assert any(v != v for v in values) and float("inf") in values, values
    assert any("extract/results.json" in note and "NaN or infinite" in note for note in table["notes"]), table["notes"]
    csv_text = (tmp_path / "table.csv").read_text()
    assert ",nan," in csv_text and ",inf," in csv_text
