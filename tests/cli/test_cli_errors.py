"""Bad input gives one line on stderr that says what to fix, and a non-zero exit."""

import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from geomprobe.cli import app

runner = CliRunner()


def _fails_with_one_line(args, expected, env=None):
    result = runner.invoke(app, args, env=env)
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ") and expected in lines[0], lines[0]
    assert "Traceback" not in result.output
    return lines[0]


def test_unknown_alias_suggests_close_ones():
    line = _fails_with_one_line(["run", "--model", "pythia-410", "--quiet"], "unknown model 'pythia-410'")
    assert "pythia-410m" in line


@pytest.mark.slow
def test_missing_hub_model_offline(tmp_path):
    env = {"HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "1"}
    line = _fails_with_one_line(["run", "--model", "pythia-70m@step0", "--quiet", "--out", str(tmp_path / "r")],
                                "is not in the local Hugging Face cache", env=env)
    assert "EleutherAI/pythia-70m@step0" in line and "HF_HOME" in line and "local model directory" in line


def test_malformed_prompt_line(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "text": "one"}\n\n{"id": "b", "text": "two"\n')
    _fails_with_one_line(["prompts", "validate", str(bad)], "bad.jsonl line 3: not valid JSON")
    bad.write_text('{"id": "a", "text": "one"}\n{"id": "b"}\n')
    _fails_with_one_line(["run", "--model", "tiny-neox", "--prompts", str(bad), "--quiet", "--out", str(tmp_path / "r")],
                         'line 2: missing "text"')
    bad.write_text('{"id": "a", "text": "one"}\n{"id": "a", "text": "two"}\n')
    _fails_with_one_line(["prompts", "validate", str(bad)], 'line 2: duplicate id "a" (first on line 1)')


def test_layer_out_of_range(tmp_path):
    _fails_with_one_line(["run", "--model", "tiny-neox", "--layers", "0,9", "--quiet", "--out", str(tmp_path / "r")],
                         "layer 9 is out of range: this model has 4 layers (0-3)")
    _fails_with_one_line(["run", "--model", "tiny-neox", "--layers", "a,b", "--quiet", "--out", str(tmp_path / "r")],
                         "--layers takes comma-separated integers")


def test_unknown_suite_dtype_and_label(tmp_path):
    _fails_with_one_line(["run", "--suite", "nope", "--quiet"], "unknown suite 'nope': available suites are")
    _fails_with_one_line(["run", "--model", "tiny-neox", "--dtype", "float8", "--quiet"], "unknown dtype 'float8'")
    _fails_with_one_line(["run", "--model", "tiny-neox", "--tokens", " zyxwvutsrq", "--quiet", "--out", str(tmp_path / "r")],
                         "' zyxwvutsrq' is")


def test_local_dir_without_config(tmp_path):
    _fails_with_one_line(["run", "--model", str(tmp_path), "--quiet"], "has no config.json")


def test_good_prompt_file_validates(tmp_path):
    good = tmp_path / "good.txt"
    good.write_text("first prompt\n\nsecond prompt\n")
    result = runner.invoke(app, ["prompts", "validate", str(good)])
    assert result.exit_code == 0 and "2 prompts, ok" in result.output


@pytest.mark.slow
def test_installed_entry_point_exits_nonzero_without_traceback(tmp_path):
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run([sys.executable, "-m", "geomprobe.cli", "run", "--model", "no-such-model", "--quiet"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith("error: unknown model 'no-such-model'")
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("spec,expected", [("pythia-410m@step0", ("pythia-410m", "step0")),
                                           ("EleutherAI/pythia-70m@step1000", ("EleutherAI/pythia-70m", "step1000")),
                                           ("phi-2", ("phi-2", None))])
def test_model_spec_parsing(spec, expected):
    from geomprobe.models import parse_model_spec

    assert parse_model_spec(spec) == expected


def test_models_command_lists_every_alias():
    from geomprobe.models import MODELS

    result = runner.invoke(app, ["models"])
    assert result.exit_code == 0
    for alias in ("pythia-70m", "pythia-12b", "phi-2", "llama-3.2-1b-instruct", "mistral-7b", "mixtral-8x7b"):
        assert alias in result.output
        assert MODELS[alias].hub_id in result.output


def test_a_zipfile_cut_by_ctrl_c_prints_no_traceback(monkeypatch):
    """A Ctrl-C inside zipfile.ZipFile.__init__ (a shard being written) leaves an object whose
    __del__ raises; the command line's unraisable hook drops exactly that and passes anything else on."""
    import gc
    import zipfile

    from geomprobe.cli import _drop_interrupted_zipfile

    passed = []
    monkeypatch.setattr(sys, "__unraisablehook__", passed.append)
    monkeypatch.setattr(sys, "unraisablehook", _drop_interrupted_zipfile)
    cut = zipfile.ZipFile.__new__(zipfile.ZipFile)  # as left by an interrupt before __init__ set _writing
    cut.fp, cut._filePassed = open(os.devnull, "rb"), 0
    del cut
    gc.collect()
    assert passed == []

    class Noisy:
        def __del__(self):
            raise AttributeError("not a zipfile")

    noisy = Noisy()
    del noisy
    gc.collect()
    assert len(passed) == 1 and "not a zipfile" in str(passed[0].exc_value)


def test_a_mistyped_model_is_refused_before_torch_loads(tmp_path):
    """`geomprobe run` refuses an alias typo in one line (with the closest aliases) before torch or
    transformers is imported (python -X importtime lists every import), so it costs about a second."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "geomprobe.cli", "run", "--model", "pythia-41m",
                           "--out", str(tmp_path / "r")], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "COLUMNS": "200"})
    assert done.returncode == 2
    errors = [line for line in done.stderr.splitlines() if not line.startswith("import time:")]
    assert len(errors) == 1 and "unknown model 'pythia-41m' (did you mean pythia-410m" in errors[0], errors
    imported = {line.split("|")[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert "geomprobe.commandline" in imported and not {"torch", "transformers"} & imported
    assert not (tmp_path / "r").exists()
