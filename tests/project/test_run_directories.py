"""Run directories you can trust: a rejected command changes nothing on disk, failures
and Ctrl-C are recorded, resume needs the same model and options, one writer at a time, only
geomprobe's own files are deleted, files are readable by collaborators, and bad input is one line."""

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from geomprobe.cli import app
from geomprobe.errors import ConfigError, GeomprobeError, ModelNotFoundError, RunDirectoryError
from geomprobe.runner import RunConfig, run

cli = CliRunner()


def _one_line_error(args, expected):
    result = cli.invoke(app, [*args, "--quiet"] if args[0] == "run" else args)
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and expected in lines[0], result.stderr
    return lines[0]


def _snapshot(directory: Path) -> dict:
    """Every file below `directory` with its bytes (the lock file's holder line aside)."""
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*"))
            if p.is_file() and p.name != ".geomprobe.lock"}


@pytest.fixture
def finished(tmp_path, geomprobe_cache):
    """A complete extract run of tiny-neox."""
    out = tmp_path / "run"
    run(RunConfig(model="tiny-neox", out=str(out)), "extract", progress=False)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("args,expected", [
    (["--layers", "99"], "layer 99 is out of range"),
    (["--suite", "sula", "--labels", "elephant,giraffe"], "'elephant' is not a single token"),
    (["--readouts", "foo"], "unknown readout(s) foo"),
    (["--seed", "3"], "differs in: seed 0 -> 3"),
    (["--suite", "extract", "--device", "tpu"], "unknown device 'tpu'"),
])
def test_a_rejected_command_changes_nothing_on_disk(finished, args, expected):
    before = _snapshot(finished)
    suite = [] if "--suite" in args else ["--suite", "extract"]
    _one_line_error(["run", "--model", "tiny-neox", "--out", str(finished), *suite, *args], expected)
    assert _snapshot(finished) == before


def test_suite_pairing_is_checked_before_a_wind_tunnel_is_trained(tmp_path, geomprobe_cache):
    from geomprobe.windtunnel.builtin import windtunnel_dir

    assert not windtunnel_dir("bijection").exists()  # this session's cache: the tunnel is not trained yet
    started = time.perf_counter()
    _one_line_error(["run", "--model", "windtunnel-bijection", "--suite", "sula", "--out", str(tmp_path / "r")],
                    "'bijection' wind tunnel")
    assert time.perf_counter() - started < 30 and not windtunnel_dir("bijection").exists()
    assert not (tmp_path / "r").exists()


def test_a_failing_suite_is_marked_failed(tmp_path, monkeypatch):
    import dataclasses

    from geomprobe.suites import SUITES

    def broken(ctx):
        raise RuntimeError("disk controller on fire")

    monkeypatch.setitem(SUITES, "extract", dataclasses.replace(SUITES["extract"], run=broken))
    with pytest.raises(RuntimeError):
        run(RunConfig(model="tiny-neox", out=str(tmp_path / "r")), "extract", progress=False)
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert manifest["status"] == "failed"
    assert manifest["suites"]["extract"]["status"] == "failed"
    assert manifest["suites"]["extract"]["error"] == "disk controller on fire"


@pytest.mark.slow
def test_ctrl_c_marks_the_run_interrupted_and_says_how_to_resume(tmp_path):
    prompts = tmp_path / "many.txt"
    prompts.write_text("".join(f"prompt number {i} reads a few words about the weather today\n" for i in range(3000)))
    out = tmp_path / "r"
    command = [sys.executable, "-m", "geomprobe.cli", "run", "--model", "tiny-neox", "--suite", "extract",
               "--prompts", str(prompts), "--batch-size", "1", "--out", str(out), "--quiet"]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "OMP_NUM_THREADS": "1"})
    shards = out / "extraction" / "shards"
    deadline = time.time() + 120
    while time.time() < deadline and not (shards.exists() and len(list(shards.glob("shard-*.npz"))) >= 5):
        time.sleep(0.2)
    assert proc.poll() is None, "the extraction finished before it could be interrupted"
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "interrupted" in stderr and "rerun the same command to resume" in stderr and "Traceback" not in stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "interrupted" and manifest["suites"]["extract"]["status"] == "interrupted"


@pytest.mark.slow
def test_a_finished_suite_is_not_replaced_by_other_options_without_overwrite(tmp_path):
    from geomprobe.suites.sula import SulaConfig

    out = tmp_path / "r"
    small = dict(n_per_k=2, controls=(), n_boot=20, null="off")
    run(RunConfig(model="tiny-neox", out=str(out)), SulaConfig(**small), progress=False)
    before = _snapshot(out)
    with pytest.raises(RunDirectoryError, match=r"sula suite .* finished with other options \(differs in: n_per_k 2 -> 3"):
        run(RunConfig(model="tiny-neox", out=str(out)), SulaConfig(**{**small, "n_per_k": 3}), progress=False)
    assert _snapshot(out) == before
    run(RunConfig(model="tiny-neox", out=str(out)), SulaConfig(**small), progress=False)  # the same options: resumes
    run(RunConfig(model="tiny-neox", out=str(out), overwrite=True), SulaConfig(**{**small, "n_per_k": 3}), progress=False)
    results = json.loads((out / "sula" / "results.json").read_text())
    assert results["settings"]["n_per_k"] == 3


@pytest.mark.slow
def test_replaced_local_weights_are_not_resumed_as_the_old_model(tmp_path):
    import torch

    from geomprobe.models import load_model

    model_dir = tmp_path / "model"
    loaded = load_model("tiny-neox")
    loaded.model.save_pretrained(model_dir)
    loaded.tokenizer.save_pretrained(model_dir)
    out = tmp_path / "r"
    run(RunConfig(model=str(model_dir), out=str(out)), "extract", progress=False)
    with torch.no_grad():  # new weights in the same place
        for parameter in loaded.model.parameters():
            parameter.add_(0.01)
    loaded.model.save_pretrained(model_dir)
    with pytest.raises(RunDirectoryError, match=r"model_identity\.sha256"):
        run(RunConfig(model=str(model_dir), out=str(out)), "extract", progress=False)
    run(RunConfig(model=str(model_dir), out=str(out), overwrite=True), "extract", progress=False)
    fresh = np.load(out / "extraction" / "next_entropy_bits.npy")
    from geomprobe.extraction import extract
    from geomprobe.models.builtin import demo_prompts_path
    from geomprobe.prompts import read_prompts

    expected = extract(load_model(str(model_dir)), read_prompts(demo_prompts_path()), progress=False)
    np.testing.assert_array_equal(fresh, expected["next_entropy_bits"])

    # the same weights with another tokenizer: another model, never the old arrays
    import transformers

    tokenizer = transformers.AutoTokenizer.from_pretrained(model_dir)
    tokenizer.add_tokens(["France"])
    tokenizer.save_pretrained(model_dir)
    with pytest.raises(RunDirectoryError, match=r"model_identity\.tokenizer_sha256"):
        run(RunConfig(model=str(model_dir), out=str(out)), "extract", progress=False)


@pytest.mark.slow
def test_a_second_writer_is_refused_with_the_holders_pid(tmp_path):
    out = tmp_path / "r"
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time\nfrom geomprobe.locks import DirectoryLock\n"
        f"lock = DirectoryLock({str(out)!r}); lock.acquire(); print('held', flush=True); time.sleep(60)")],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(RunDirectoryError, match=rf"in use by another geomprobe process \(pid {holder.pid}"):
            run(RunConfig(model="tiny-neox", out=str(out)), "extract", progress=False)
        assert not (out / "manifest.json").exists()
    finally:
        holder.kill()
        holder.wait()
    run(RunConfig(model="tiny-neox", out=str(out)), "extract", progress=False)  # the kernel dropped the dead holder's lock
    assert json.loads((out / "manifest.json").read_text())["status"] == "complete"


@pytest.mark.slow
def test_overwrite_deletes_only_geomprobes_files(finished):
    (finished / "thesis.tex").write_text("months of work")
    (finished / "notes").mkdir()
    (finished / "notes" / "a.txt").write_text("keep")
    run(RunConfig(model="tiny-neox", out=str(finished), seed=5, overwrite=True), "extract", progress=False)
    assert (finished / "thesis.tex").read_text() == "months of work" and (finished / "notes" / "a.txt").exists()
    assert json.loads((finished / "manifest.json").read_text())["seed"] == 5


@pytest.mark.slow
def test_out_paths_that_must_not_hold_a_run(tmp_path, monkeypatch):
    from geomprobe.models import load_model

    monkeypatch.chdir(tmp_path)
    _one_line_error(["run", "--model", "tiny-neox", "--out", "."], "is the current directory")
    _one_line_error(["run", "--model", "tiny-neox", "--out", ""], "--out is empty")
    (tmp_path / "a-file").write_text("x")
    _one_line_error(["run", "--model", "tiny-neox", "--out", "a-file"], "is a file, not a directory")
    _one_line_error(["run", "--model", "tiny-neox", "--out", "a-file/below"], "which is a file")
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "data.csv").write_text("1,2\n")
    _one_line_error(["run", "--model", "tiny-neox", "--out", str(mine)], "holds other files (data.csv)")
    model_dir = tmp_path / "model"
    loaded = load_model("tiny-neox")
    loaded.model.save_pretrained(model_dir)
    loaded.tokenizer.save_pretrained(model_dir)
    _one_line_error(["run", "--model", str(model_dir), "--out", str(model_dir)], "holds a model (config.json)")
    assert not (model_dir / "manifest.json").exists() and (mine / "data.csv").read_text() == "1,2\n"
    assert sorted(p.name for p in mine.iterdir()) == ["data.csv"]


@pytest.mark.slow
def test_written_files_honour_the_umask(finished):
    mask = os.umask(0o022)
    os.umask(mask)
    written = [finished / "manifest.json", *(finished / "extraction").rglob("*.npy")]
    assert len(written) > 3
    for path in written:
        assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~mask, path


@pytest.mark.slow
def test_a_full_disk_is_one_line(tmp_path):
    mount = tmp_path / "small"
    mount.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)], capture_output=True)
    if made.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here ({made.stderr.decode().strip() or 'not root'})")
    try:
        from geomprobe.rundir import atomic_write_bytes

        with pytest.raises(RunDirectoryError, match="no space left on the device writing"):
            atomic_write_bytes(mount / "big.bin", b"x" * (1 << 20))
        assert list(mount.iterdir()) == []  # the temporary file is gone too
        result = cli.invoke(app, ["run", "--model", "tiny-neox", "--out", str(mount / "run"), "--readouts",
                                  "values,resid,z", "--quiet"])
        assert result.exit_code == 2 and "no space left on the device" in result.stderr, result.output
    finally:
        subprocess.run(["umount", str(mount)], capture_output=True)


@pytest.mark.slow
def test_bad_input_is_one_line(tmp_path):
    _one_line_error(["run", "--model", "tiny-neox", "--layers", ","], "--layers needs at least one layer index")
    _one_line_error(["run", "--model", "tiny-neox", "--device-map", "bogus"], "unknown device map 'bogus'")
    _one_line_error(["run", "--model", "tiny-neox", "--seed", "-1"], "--seed must be >= 0")
    _one_line_error(["run", "--model", "tiny-neox", "--seed", "99999999999999"], "--seed must be <= 4294967295")
    _one_line_error(["run", "--model", "tiny-neox", "--suite", "ablation", "--n-random", "0"], "--n-random must be >= 1")
    _one_line_error(["run", "--model", "tiny-neox", "--prompts", str(tmp_path)], "is a directory: give a prompt file")
    _one_line_error(["report", str(tmp_path), "-o", str(tmp_path)], "is a directory: give the report's file name")
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text("{not json")
    (broken / "model.safetensors").write_bytes(b"\0" * 16)
    _one_line_error(["run", "--model", str(broken), "--out", str(tmp_path / "r")], "cannot be read as a model")
    (broken / "model.safetensors").unlink()
    (broken / "config.json").write_text('{"model_type": "gpt_neox"}')
    _one_line_error(["run", "--model", str(broken), "--out", str(tmp_path / "r")], "has a config.json but no weights")
    with pytest.raises(ModelNotFoundError):
        run(RunConfig(model=str(broken), out=str(tmp_path / "r")), "extract", progress=False)
    (tmp_path / "manifest-run").mkdir()
    (tmp_path / "manifest-run" / "manifest.json").write_text('{"status": "comp')
    _one_line_error(["run", "--model", "tiny-neox", "--out", str(tmp_path / "manifest-run")],
                    "manifest.json is corrupt")


def test_revision_on_a_local_directory_is_refused(tmp_path):
    from geomprobe.models import load_model

    model_dir = tmp_path / "model"
    loaded = load_model("tiny-neox")
    loaded.model.save_pretrained(model_dir)
    loaded.tokenizer.save_pretrained(model_dir)
    with pytest.raises(ConfigError, match="local directory.*no revisions"):
        run(RunConfig(model=str(model_dir), revision="step0", out=str(tmp_path / "r")), "extract", progress=False)
    with pytest.raises(ConfigError, match="no revisions"):
        load_model(f"{model_dir}@step0")
    assert not (tmp_path / "r").exists()


def test_prompt_files_json_names_bom_and_encoding(tmp_path):
    from geomprobe.prompts import read_prompts

    records = '{"id": "a", "text": "one"}\n{"id": "b", "text": "two"}\n'
    for name in ("p.json", "p.JSONL", "p.txt"):
        (tmp_path / name).write_text(records)
        assert [p.text for p in read_prompts(tmp_path / name)] == ["one", "two"], name
    (tmp_path / "bom.txt").write_bytes("\ufefffirst line\nsecond\n".encode("utf-8"))
    assert read_prompts(tmp_path / "bom.txt")[0].text == "first line"
    (tmp_path / "latin.txt").write_bytes("fine\nalso fine\ncaf\xe9\n".encode("latin-1"))
    with pytest.raises(GeomprobeError, match=r"latin\.txt line 3: not UTF-8"):
        read_prompts(tmp_path / "latin.txt")


@pytest.mark.slow
def test_temporaries_of_a_killed_write_are_removed_on_the_next_open(finished):
    stale = [finished / ".manifest.json.ab12cd_9.geomprobe-tmp", finished / "extraction" / ".values.npy.zz99yy00.geomprobe-tmp"]
    for path in stale:
        path.write_bytes(b"half a file")
    keep = finished / ".my-notes.txt"
    keep.write_text("mine")
    run(RunConfig(model="tiny-neox", out=str(finished)), "extract", progress=False)
    assert not any(path.exists() for path in stale) and keep.read_text() == "mine"


def test_a_run_that_cannot_fit_is_refused_before_loading(tmp_path):
    out = tmp_path / "r"
    started = time.perf_counter()
    with pytest.raises(ConfigError, match=r"needs [0-9.]+ GiB .* but cpu .* has [0-9.]+ GiB.*--skip-plan-check"):
        run(RunConfig(model="mixtral-8x7b", dtype="float32", out=str(out)), "extract", progress=False)
    assert time.perf_counter() - started < 20 and not out.exists()


@pytest.mark.slow
def test_the_batch_size_defaults_to_8_on_a_cpu(finished):
    manifest = json.loads((finished / "manifest.json").read_text())
    assert manifest["suites"]["extract"]["run_config"]["batch_size"] == 8


def test_overwrite_removes_only_registered_suite_folders_inside_the_run(tmp_path):
    """A manifest naming a suite '..' or '.' (or a path, or a name no suite has) makes --overwrite
    delete nothing of it: the folders to remove are registered suites' folders inside the run."""
    from geomprobe.rundir import RunDirectory

    parent = tmp_path / "parent"
    run_dir = parent / "run"
    (run_dir / "geometry").mkdir(parents=True)
    (run_dir / "geometry" / "results.json").write_text("{}")
    (run_dir / "mine").mkdir()
    (run_dir / "mine" / "notes.txt").write_text("keep")
    (run_dir / "thesis.tex").write_text("keep")
    (parent / "sibling.txt").write_text("keep")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "data.csv").write_text("keep")
    (run_dir / "sula").symlink_to(outside, target_is_directory=True)
    manifest = {"fingerprint": "old", "config": {"model": "x"}, "status": "complete",
                "suites": {name: {"status": "complete", "options": {}} for name in
                           ("..", ".", "mine", "../..", "/etc", "geometry", "sula")}}
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    RunDirectory(run_dir).open({"model": "y"}, overwrite=True, registered={"geometry", "sula", "extract"})
    assert not (run_dir / "geometry").exists()  # a registered suite's folder: geomprobe's own
    assert (parent / "sibling.txt").read_text() == "keep" and (run_dir / "thesis.tex").read_text() == "keep"
    assert (run_dir / "mine" / "notes.txt").read_text() == "keep"  # not a registered suite
    assert (outside / "data.csv").read_text() == "keep"  # a link out of the run is not followed


def test_a_rerun_cleans_only_the_temporaries_geomprobe_named(tmp_path):
    from geomprobe.rundir import atomic_writer, remove_temporaries

    lookalikes = [tmp_path / ".bashrc.original", tmp_path / ".thesis.tex.20240101", tmp_path / "notes" / ".draft.v2_final",
                  tmp_path / ".results.json.abcd1234"]
    for path in lookalikes:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("user file")
    with pytest.raises(KeyboardInterrupt):  # a write killed half-way leaves no file of its own ...
        with atomic_writer(tmp_path / "results.json") as handle:
            handle.write(b"{")
            (leftover,) = [p for p in tmp_path.iterdir() if p.name.startswith(".results.json.") and p not in lookalikes]
            raise KeyboardInterrupt
    assert not leftover.exists() and leftover.name.endswith(".geomprobe-tmp")
    ours = tmp_path / "sula" / ".results.json.k2j4h5l6.geomprobe-tmp"  # ... unless killed with -9: this
    ours.parent.mkdir()
    ours.write_text("{")
    assert remove_temporaries(tmp_path) == [ours]
    assert all(path.read_text() == "user file" for path in lookalikes)


def test_prompt_lines_end_at_newlines_only(tmp_path):
    """U+2028, NEL and form feed are characters of a prompt, not line ends (str.splitlines breaks at
    them): a valid JSONL string holding U+2028 is read, a .txt prompt holding a form feed stays one."""
    from geomprobe.prompts import read_prompts

    jsonl = tmp_path / "p.jsonl"
    jsonl.write_text(json.dumps({"id": "a", "text": "one\u2028two"}, ensure_ascii=False) + "\r\n"
                     + json.dumps({"id": "b", "text": "three\x85four"}, ensure_ascii=False) + "\n", encoding="utf-8")
    assert [p.text for p in read_prompts(jsonl)] == ["one\u2028two", "three\x85four"]
    text = tmp_path / "p.txt"
    text.write_text("page one\x0cpage two\nsecond prompt\rthird prompt\n\nfourth", encoding="utf-8")
    assert [(p.id, p.text) for p in read_prompts(text)] == [
        ("line-1", "page one\x0cpage two"), ("line-2", "second prompt"), ("line-3", "third prompt"), ("line-5", "fourth")]


def test_a_prompt_longer_than_the_model_is_refused_for_its_length_not_its_memory(tmp_path):
    """A 1 MB prompt: the memory plan would say 'needs 4,500 GiB'; the answer is the positions."""
    path = tmp_path / "long.txt"
    path.write_text("word " * 200_000 + "\n")
    with pytest.raises(ConfigError, match=r"more than this model's \d+ positions: shorten it or pass --max-tokens"):
        run(RunConfig(model="tiny-neox", prompts=str(path), out=str(tmp_path / "r")), "extract", progress=False)
    assert not (tmp_path / "r").exists()


def test_a_one_prompt_extract_gives_its_values_without_intervals(tmp_path):
    path = tmp_path / "one.txt"
    path.write_text("The capital of France is\n")
    run_dir = run(RunConfig(model="tiny-neox", prompts=str(path), out=str(tmp_path / "r")), "extract", progress=False)
    results = json.loads((run_dir / "extract" / "results.json").read_text())
    assert results["n_prompts"] == 1 and results["next_entropy_bits"]["ci95"] == [None, None]
    values = np.load(run_dir / "extraction" / "next_entropy_bits.npy")
    assert results["next_entropy_bits"]["value"] == pytest.approx(float(values[0]))
    assert all(layer["ci95"] == [None, None] for layer in results["layers"])
