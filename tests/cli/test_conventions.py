"""The field's command-line conventions (issue 42 item 3 and 5): --json errors as JSON, --suite
list, --output_path, --limit, one results document per run (run.json), and a finished run rerun
answered from its directory without loading torch."""

import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from geomprobe.cli import app
from geomprobe.config import RunConfig

runner = CliRunner()


def _json_line(stdout: str) -> dict:
    lines = [line for line in stdout.splitlines() if line.startswith("{")]
    assert len(lines) == 1, stdout
    return json.loads(lines[0])


@pytest.mark.parametrize("args, kind, words", [
    (["run", "--model", "pythia-41m", "--json"], "ModelNotFoundError", "did you mean pythia-410m"),
    (["run", "--model", "tiny-neox", "--suite", "nope", "--json"], "ConfigError", "unknown suite 'nope'"),
    (["run", "--model", "tiny-neox", "--suite", "sula", "--alpha", "2", "--json"], "ConfigError", "--alpha must be"),
    (["plan", "--model", "tiny-neox", "--limit", "0", "--json"], "ConfigError", "--limit"),
])
def test_json_errors_are_one_json_object_on_stdout(args, kind, words):
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    answer = _json_line(result.stdout)
    assert answer["kind"] == kind and words in answer["error"] and answer["exit_code"] == 2
    assert "\n" not in answer["error"]


def test_without_json_an_error_leaves_stdout_empty():
    result = runner.invoke(app, ["run", "--model", "pythia-41m"])
    assert result.exit_code == 2 and result.stdout.strip() == ""


@pytest.mark.slow
def test_a_usage_error_with_json_is_json_too():
    result = subprocess.run([sys.executable, "-m", "geomprobe", "models", "--json", "--bogus"], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 2 and "No such option" in result.stderr
    assert _json_line(result.stdout) == {"error": "No such option: --bogus", "kind": "NoSuchOption", "exit_code": 2}


def test_suite_list_is_the_suites_listing():
    listed, suites = runner.invoke(app, ["run", "--suite", "list"]), runner.invoke(app, ["suites"])
    assert listed.exit_code == suites.exit_code == 0 and listed.stdout == suites.stdout
    assert listed.stdout.startswith("extract ")
    as_json = json.loads(runner.invoke(app, ["run", "--suite", "list", "--json"]).stdout)
    assert [entry["name"] for entry in as_json] == [entry["name"] for entry in
                                                     json.loads(runner.invoke(app, ["suites", "--json"]).stdout)]


def test_a_suite_flag_overrides_the_config_files_suite(tmp_path):
    config = tmp_path / "c.json"
    config.write_text(json.dumps({"suite": "sula", "model": "tiny-neox"}))
    flagged = json.loads(runner.invoke(app, ["plan", "--config", str(config), "--suite", "extract", "--json"]).stdout)
    filed = json.loads(runner.invoke(app, ["plan", "--config", str(config), "--json"]).stdout)
    assert [s["name"] for s in flagged["suites"]] == ["extract"] and [s["name"] for s in filed["suites"]] == ["sula"]


def test_limit_caps_every_prompt_set_in_the_plan():
    planned = json.loads(runner.invoke(app, ["plan", "--model", "tiny-neox", "--suite", "extract,sula", "--limit", "5",
                                             "--json"]).stdout)
    extract, sula = planned["suites"]
    assert extract["n_prompts"] == 5
    assert all(" x 5)" in sweep["what"] and sweep["n_prompts_per_pass"] == 25 for sweep in sula["sweeps"]
               if sweep["what"].startswith("condition"))


@pytest.mark.slow
def test_output_path_limit_run_json_and_a_finished_rerun(tmp_path):
    out = tmp_path / "run"
    args = ["run", "--model", "tiny-neox", "--suite", "extract", "--limit", "3", "--output_path", str(out)]
    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.stdout
    document = json.loads((out / "run.json").read_text())
    extract = document["suites"]["extract"]
    assert document["document"] == "geomprobe run" and document["status"] == "complete"
    assert extract["status"] == "complete" and extract["prompts"]["n"] == 3
    assert extract["results"] == json.loads((out / "extract" / "results.json").read_text())
    assert extract["headlines"] and document["versions"]["torch"] and document["config"]["limit"] == 3
    assert document["model"]["spec"] == "tiny-neox" and extract["seconds"] is not None
    # the same command again: complete, answered from the directory, torch never imported
    probe = ("import sys, atexit\natexit.register(lambda: print('TORCH' if 'torch' in sys.modules else 'NO TORCH'))\n"
             f"sys.argv = ['geomprobe', *{args!r}]\nfrom geomprobe.cli import main\nmain()\n")
    again = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    assert "finished with these settings: nothing to recompute" in again.stderr
    assert again.stdout.strip().endswith("NO TORCH") and f"results: {out}" in again.stdout
    assert "next-token entropy" in again.stdout  # the suite's summary, as a run prints it
    # another limit is another run: refused without --overwrite, as any changed setting is
    other = runner.invoke(app, [*args[:-4], "--limit", "4", "--output_path", str(out)])
    assert other.exit_code == 2 and "--overwrite" in other.stderr


def _t5_directory(path):
    path.mkdir()
    (path / "config.json").write_text(json.dumps({"model_type": "t5", "architectures": ["T5ForConditionalGeneration"]}))
    (path / "model.safetensors").write_bytes(b"")
    return path


@pytest.mark.parametrize("case, error, words", [
    ("missing path", "ModelNotFoundError", "does not exist"),
    ("directory without config", "ModelNotFoundError", "has no config.json"),
    ("unsupported family", "UnsupportedModelError", "a 't5' model (T5ForConditionalGeneration), a family geomprobe "
                                                    "has no adapter for: the supported families are bert, "),
    ("typo", "ModelNotFoundError", "did you mean pythia-410m"),
])
def test_what_no_load_could_use_is_refused_from_the_spec(tmp_path, case, error, words):
    from geomprobe.models.loading import check_spec

    spec = {"missing path": str(tmp_path / "nowhere"), "directory without config": str(tmp_path),
            "unsupported family": None, "typo": "pythia-41m"}[case] or str(_t5_directory(tmp_path / "t5"))
    with pytest.raises(Exception) as refused:
        check_spec(spec)
    assert type(refused.value).__name__ == error and words in str(refused.value)


def test_supported_local_directories_and_aliases_pass_the_spec_check(tmp_path):
    from geomprobe.models.loading import check_spec

    for spec in ("tiny-neox", "pythia-410m@step0", "geomprobe/data/windtunnels/sula"):
        check_spec(spec)


@pytest.mark.slow
def test_an_unsupported_family_is_refused_without_importing_torch(tmp_path):
    directory = _t5_directory(tmp_path / "t5")
    probe = ("import sys, atexit\natexit.register(lambda: print('TORCH' if 'torch' in sys.modules else 'NO TORCH'))\n"
             f"sys.argv = ['geomprobe', 'run', '--model', {str(directory)!r}, '--out', {str(tmp_path / 'r')!r}]\n"
             "from geomprobe.cli import main\nmain()\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "a family geomprobe has no adapter for" in done.stderr
    assert done.stdout.strip() == "NO TORCH" and not (tmp_path / "r").exists()


@pytest.mark.parametrize("damage", ["none", "truncated array", "object array", "temporary left", "results a list",
                                    "another version"])
def test_a_rerun_answers_from_disk_only_when_the_files_look_whole(tmp_path, damage):
    import numpy as np

    from geomprobe.runner import _files_intact
    from geomprobe.suites.extract import ExtractConfig

    (tmp_path / "extract").mkdir()
    (tmp_path / "extraction").mkdir()
    from geomprobe import __version__

    (tmp_path / "extract" / "results.json").write_text(
        "[]" if damage == "results a list" else json.dumps({"geomprobe_version": __version__}))
    values = tmp_path / "extraction" / "values.npy"
    np.save(values, np.arange(64, dtype=np.float32).reshape(4, 16))
    if damage == "truncated array":
        values.write_bytes(values.read_bytes()[:-8])
    elif damage == "object array":
        np.save(values, np.array([{"a": 1}, 2], dtype=object), allow_pickle=True)
    elif damage == "another version":
        (tmp_path / "extract" / "results.json").write_text(json.dumps({"geomprobe_version": "0.0.1"}))
    elif damage == "temporary left":
        (tmp_path / "extraction" / ".values.npy.ab12.geomprobe-tmp").write_bytes(b"half")
    assert _files_intact(tmp_path, [ExtractConfig()]) == (damage == "none")


@pytest.mark.parametrize("limit, start, found", [(48, 8, 32), (48, 64, 32), (5000, 8, 1024), (1, 8, 1), (8, 8, 8)])
def test_batch_size_auto_finds_the_largest_batch_that_fits(limit, start, found):
    from geomprobe.batching import search

    tried = []

    def fits(batch):  # what a device with room for `limit` prompts answers
        tried.append(batch)
        return batch <= limit

    assert search(fits, start) == found
    assert len(tried) <= 12 and len(set(tried)) == len(tried)  # doubling or halving: each size tried once


def test_batch_size_auto_refuses_when_nothing_fits():
    from geomprobe.batching import search
    from geomprobe.errors import ConfigError

    with pytest.raises(ConfigError, match="not even one prompt"):
        search(lambda batch: False, 8)


def test_batch_size_auto_is_a_value_of_the_option():
    from geomprobe.errors import ConfigError

    assert RunConfig(batch_size="auto").batch_size == "auto" == RunConfig(batch_size="AUTO").batch_size
    assert RunConfig.from_dict(RunConfig(batch_size="auto").to_dict()).batch_size == "auto"
    with pytest.raises(ConfigError, match="--batch-size"):
        RunConfig(batch_size="automatic")


@pytest.mark.slow
def test_batch_size_auto_on_a_cpu_keeps_the_plans_batch_and_says_so(tmp_path):
    from geomprobe import run

    done = run(RunConfig(model="tiny-neox", out=str(tmp_path / "r"), batch_size="auto", limit=3, device="cpu"),
               "extract", quiet=True)
    record = done.manifest["batch_size_auto"]
    assert record["batch_size"] == done.manifest["suites"]["extract"]["run_config"]["batch_size"] == 8
    assert "only GPU memory is probed" in record["how"] and record["tokens"] >= 1
