"""The bounded reading primitive (geomprobe.files) and the readers built on it (geomprobe.readers):
each failure is its own class, also the kind's geomprobe.errors class, with a one-line message
naming the file and the fix; writes confined to the run directory (geomprobe.rundir.confined).
Issue 43; the property-based side is test_fuzz_readers.py."""

from __future__ import annotations

import json
import os
import threading

import pytest

from geomprobe import files, readers
from geomprobe.errors import ConfigError, GeomprobeError, PromptFileError, RunDirectoryError

KIND = files.FileKind("test file", ConfigError, 1024, "fix it", max_depth=8)


def one_line(error: BaseException) -> str:
    text = str(error)
    assert "\n" not in text and text, repr(text)
    return text


def refused(failure, call, *words):
    with pytest.raises(failure) as caught:
        call()
    text = one_line(caught.value)
    for word in words:
        assert word in text, text
    return caught.value


# ------------------------------------------------------------------------------------------------
# the primitive


def test_a_failure_is_its_own_class_and_the_kinds_error_class(tmp_path):
    error = refused(files.MissingFile, lambda: files.read_json(tmp_path / "none.json", KIND), "none.json",
                    "does not exist", "fix it")
    assert isinstance(error, ConfigError) and isinstance(error, files.FileProblem)
    assert type(error).__name__ == "ConfigFileMissingFile"
    prompt = files.FileKind("prompt file", PromptFileError, 10, "")
    assert isinstance(refused(files.MissingFile, lambda: files.read_bytes(tmp_path / "x", prompt)), PromptFileError)


def test_devices_fifos_and_directories_are_never_read(tmp_path):
    refused(files.NotRegularFile, lambda: files.read_bytes("/dev/zero", KIND), "/dev/zero", "character device")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    outcome = []

    def read_fifo():
        try:
            files.read_bytes(fifo, KIND)
        except files.NotRegularFile as error:
            outcome.append(one_line(error))

    reader = threading.Thread(target=read_fifo, daemon=True)
    reader.start()
    reader.join(5)
    assert outcome and "FIFO" in outcome[0], "reading a FIFO blocked"
    refused(files.NotRegularFile, lambda: files.read_bytes(tmp_path, KIND), "a directory")
    link = tmp_path / "link.json"
    link.symlink_to("/dev/zero")
    refused(files.NotRegularFile, lambda: files.read_json(link, KIND), "link.json", "character device")
    (tmp_path / "real.json").write_text("[1]")
    (tmp_path / "ok.json").symlink_to(tmp_path / "real.json")
    assert files.read_json(tmp_path / "ok.json", KIND) == [1]  # a link to a regular file is read


def test_size_cap(tmp_path):
    (tmp_path / "big.json").write_text("[" + "1," * 600 + "1]")
    refused(files.FileTooLarge, lambda: files.read_json(tmp_path / "big.json", KIND), "1 KiB", "fix it")
    (tmp_path / "edge.json").write_text(" " * 1020 + "[1]")
    assert files.read_json(tmp_path / "edge.json", KIND) == [1]


def test_utf8_depth_nonfinite_surrogates_and_syntax_name_the_line(tmp_path):
    refused(files.NotUTF8, lambda: files.decode(b'{"a":\n"caf\xe9"}', "f.json", KIND), "f.json line 2",
            "not UTF-8")
    refused(files.TooDeep, lambda: files.loads("[" * 9 + "]" * 9, "f.json", KIND), "over 8 deep")
    assert files.loads("[" * 8 + "]" * 8, "f.json", KIND)
    assert files.loads('["[[[[[[[[[[[[", {"a": "}}}}}}}}}}"}]', "f.json", KIND)  # brackets in strings
    refused(files.TooDeep, lambda: files.loads("[" * 200_000 + "]" * 200_000, "f.json", KIND))
    refused(files.NonFiniteNumber, lambda: files.loads('{"a": 1,\n"b": NaN}', "f.json", KIND), "NaN", "line 2")
    refused(files.NonFiniteNumber, lambda: files.loads("[1e999]", "f.json", KIND), "1e999")
    lenient = files.FileKind("results", RunDirectoryError, 1024, "", nonfinite=True)
    assert files.loads("[NaN, Infinity]", "f.json", lenient)[1] == float("inf")
    refused(files.LoneSurrogate, lambda: files.loads('{"a":\n "x\\ud800"}', "f.json", KIND), "line 2", "\\ud800")
    refused(files.LoneSurrogate, lambda: files.loads('{"\\udc00": 1}', "f.json", KIND), "\\udc00")
    assert files.loads('"\\ud83d\\ude00"', "f.json", KIND) == "\U0001f600"  # a pair is one character
    assert files.loads('"\\\\ud800"', "f.json", KIND) == "\\ud800"  # an escaped backslash, not an escape
    refused(files.NotJSON, lambda: files.loads('{"a": 1', "f.json", KIND), "line 1, column 8")
    refused(files.NotJSON, lambda: files.loads("1" * 5000, "f.json", KIND))  # more digits than Python converts


def test_yaml_and_toml_are_checked_the_same_way():
    pytest.importorskip("yaml")
    assert files.load_yaml("a: [1, {b: c}]\n", "f.yaml", KIND) == {"a": [1, {"b": "c"}]}
    refused(files.NotJSON, lambda: files.load_yaml("a: &x [1]\nb: *x\n", "f.yaml", KIND), "alias")
    refused(files.NotJSON, lambda: files.load_yaml("a: !!python/object/apply:os.system [true]\n", "f.yaml", KIND))
    refused(files.NonFiniteNumber, lambda: files.load_yaml("a: .nan\n", "f.yaml", KIND), "['a']")
    refused(files.TooDeep, lambda: files.load_yaml("[" * 10_000, "f.yaml", KIND))
    refused(files.TooDeep, lambda: files.load_yaml("a: " + "[" * 9 + "]" * 9, "f.yaml", KIND))
    refused(files.TooDeep, lambda: files.load_toml("a = " + "[" * 10_000, "f.toml", KIND))
    assert files.load_toml("a = [1, {b = 'x'}]", "f.toml", KIND) == {"a": [1, {"b": "x"}]}


# ------------------------------------------------------------------------------------------------
# the readers


def test_a_schema_mismatch_names_the_key(tmp_path):
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps({"status": "complete", "suites": {"extract": {"status": 5}}}))
    error = refused(files.SchemaMismatch, lambda: readers.read_manifest(path), "manifest.json",
                    "suites.extract.status", "--overwrite")
    assert isinstance(error, RunDirectoryError)
    path.write_text(json.dumps({"status": "complete", "suites": [], "future_key": {"x": 1}}))
    refused(files.SchemaMismatch, lambda: readers.read_manifest(path), "suites")
    path.write_text(json.dumps({"status": "complete", "future_key": {"x": 1}}))
    assert readers.read_manifest(path)["future_key"] == {"x": 1}  # unknown keys kept, ignored


def test_results_headers_a_future_version_reads_a_wrong_type_does_not(tmp_path):
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"schema_version": 99, "suite": "extract", "model": "m", "new": [float("nan")]}))
    assert readers.read_results(path)["schema_version"] == 99
    path.write_text(json.dumps({"schema_version": "3"}))
    refused(files.SchemaMismatch, lambda: readers.read_results(path), "schema_version", "damaged")
    path.write_text("[]")
    refused(files.SchemaMismatch, lambda: readers.read_results(path), "JSON array")


def test_sweep_records_refuse_jobs_that_are_not_records_or_lie_outside(tmp_path):
    job = {"name": "a@main", "model": "a", "revision": None, "suites": ["extract"], "run_dir": "runs/a@main",
           "expect": {"model": "a"}}
    record = {"spec": {"suites": "extract", "options": {}, "skip_unsupported": False, "suite_options": {}},
              "jobs": [job]}
    path = tmp_path / "sweep.json"
    path.write_text(json.dumps(record))
    assert readers.read_sweep_record(path)["jobs"][0]["name"] == "a@main"
    for jobs, words in (([{}, 5], "jobs[0].name"), ([job, 5], "jobs[1]"), ([{**job, "run_dir": "/etc"}], "outside"),
                        ([{**job, "run_dir": "runs/../../x"}], "outside"), ([{**job, "run_dir": 5}], "run_dir"),
                        ([{k: v for k, v in job.items() if k != "revision"}], "jobs[0].revision")):
        path.write_text(json.dumps({**record, "jobs": jobs}))
        refused(files.SchemaMismatch, lambda: readers.read_sweep_record(path), "sweep.json", *words.split())


def test_config_files(tmp_path):
    path = tmp_path / "c.json"
    path.write_text('{"suite": "sula", "alpha": 0.8}')
    assert readers.read_config(path) == {"suite": "sula", "alpha": 0.8}
    path.write_text('{"suite": 5}')
    refused(files.SchemaMismatch, lambda: readers.read_config(path), "--config", "suite")
    path.write_text("[1]")
    refused(ConfigError, lambda: readers.read_config(path), "not a mapping")
    path.write_text('{"suite": "extract"')
    refused(files.NotJSON, lambda: readers.read_config(path), "is not valid JSON", ".yaml")
    refused(files.NotRegularFile, lambda: readers.read_config("/dev/zero"), "--config /dev/zero")
    refused(files.MissingFile, lambda: readers.read_config('{"alpha": 0.8}'), "takes a file, not JSON text")
    path.write_text("")
    refused(files.NotJSON, lambda: readers.read_config(path))  # an empty JSON file is no mapping


def test_prompt_records_fast_check_is_the_schema():
    """prompts._plain_record is the fast form of schemas.PromptRecord: the same verdict on odd records."""
    from pydantic import ValidationError

    from geomprobe.prompts import _plain_record
    from geomprobe.schemas import PromptRecord

    cases = [{"id": "a", "text": "x"}, {"id": 1, "text": "x"}, {"id": True, "text": "x"}, {"id": 1.0, "text": "x"},
             {"id": "a", "text": " "}, {"id": "a", "text": 5}, {"id": None, "text": "x"}, {"text": "x"}, {"id": "a"},
             {"id": "a", "text": "x", "domain": [1], "extra": {}}, [], "x", None, {"id": "a", "text": "\u3000"}]
    for record in cases:
        try:
            PromptRecord.model_validate(record)
            valid = True
        except ValidationError:
            valid = False
        assert valid == _plain_record(record), record


def test_checkpoint_index(tmp_path):
    folder = tmp_path / "checkpoints"
    folder.mkdir()
    for step in (3, 10, 200):
        (folder / f"step-{step:07d}.pt").write_bytes(b"x")
    (folder / "state.pt").write_bytes(b"x")
    (folder / "step-abc.pt").write_bytes(b"x")
    assert list(readers.read_checkpoint_index(tmp_path)) == [3, 10, 200]
    assert list(readers.read_checkpoint_index(tmp_path, final_step=10)) == [3, 10]
    os.mkfifo(folder / "step-0000500.pt")
    refused(files.NotRegularFile, lambda: readers.read_checkpoint_index(tmp_path), "step-0000500.pt")


def test_json_errors_name_the_project_error_class():
    from geomprobe.commandline import _kind

    assert _kind(files.problem(files.NotJSON, RunDirectoryError, "x")) == "RunDirectoryError"
    assert _kind(ConfigError("x")) == "ConfigError"


# ------------------------------------------------------------------------------------------------
# writes stay inside the run


def test_confined_writes_and_deletions_stay_inside(tmp_path):
    from geomprobe.rundir import atomic_write_json, confined, make_dirs, remove_path

    run, outside = tmp_path / "run", tmp_path / "outside"
    run.mkdir()
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    (run / "suite").symlink_to(outside, target_is_directory=True)
    (run / "file.json").symlink_to(outside / "keep.txt")
    with confined(run):
        refused(RunDirectoryError, lambda: atomic_write_json(run / "suite" / "results.json", {}), "outside the run")
        refused(RunDirectoryError, lambda: remove_path(run / "suite" / "keep.txt"), "refusing to delete")
        refused(RunDirectoryError, lambda: make_dirs(run / "suite" / "sub"), "refusing to create")
        atomic_write_json(run / "file.json", {"a": 1})  # a link as the file itself is replaced, not followed
        remove_path(run / "suite")  # a link is removed as a link
        atomic_write_json(run / "deeper" / "x.json", {})
    assert (outside / "keep.txt").read_text() == "keep" and sorted(p.name for p in outside.iterdir()) == ["keep.txt"]
    assert json.loads((run / "file.json").read_text()) == {"a": 1} and not (run / "suite").exists()
    atomic_write_json(tmp_path / "free.json", {})  # unconfined: as before


def test_a_suite_folder_that_is_a_link_is_refused_or_replaced(tmp_path):
    from geomprobe.rundir import RunDirectory

    run, outside = tmp_path / "run", tmp_path / "out"
    run.mkdir()
    outside.mkdir()
    (outside / "results.json").write_text("{}")
    (run / "extract").symlink_to(outside, target_is_directory=True)
    refused(RunDirectoryError, lambda: RunDirectory(run).own_folder("extract"), "symbolic link", "--overwrite")
    with pytest.warns(UserWarning, match="replaced by a folder of the run's own"):
        RunDirectory(run).own_folder("extract", overwrite=True)
    assert not (run / "extract").exists() and (outside / "results.json").read_text() == "{}"


def test_the_lock_file_is_never_followed(tmp_path):
    from geomprobe.locks import DirectoryLock

    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    run = tmp_path / "run"
    run.mkdir()
    (run / ".geomprobe.lock").symlink_to(victim)
    refused(GeomprobeError, lambda: DirectoryLock(run).acquire(), "symbolic link")
    assert victim.read_text() == "precious"
    (run / ".geomprobe.lock").unlink()
    os.mkfifo(run / ".geomprobe.lock")
    refused(GeomprobeError, lambda: DirectoryLock(run).acquire(), "not a regular file")


def test_files_other_libraries_open_are_checked_first(tmp_path):
    """torch.load and friends open a path themselves: regular_file refuses a FIFO or a device first."""
    kind = readers.TORCH_FILE
    (tmp_path / "state.pt").write_bytes(b"x")
    assert files.regular_file(tmp_path / "state.pt", kind) == tmp_path / "state.pt"
    os.mkfifo(tmp_path / "fifo.pt")
    refused(files.NotRegularFile, lambda: files.regular_file(tmp_path / "fifo.pt", kind), "FIFO", "train again")
    (tmp_path / "zero.pt").symlink_to("/dev/zero")
    refused(files.NotRegularFile, lambda: files.regular_file(tmp_path / "zero.pt", kind), "character device")
