"""Notebooks and scripts: short reprs and HTML cards, run(quiet=True), `python -m geomprobe`, --json,
configs as plain values (JSON, YAML) and `geomprobe run --config FILE`."""

import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from geomprobe.cli import app
from geomprobe.config import RunConfig, read_config_file, write_config_file
from geomprobe.errors import ConfigError
from geomprobe.results import REPR_MAX, Run, load_run
from geomprobe.suites import SUITES
from geomprobe.suites.extract import ExtractConfig

runner = CliRunner()


def _prompts(directory: Path, demo_prompts, n: int = 6) -> Path:
    path = directory / "six.jsonl"
    path.write_text("".join(json.dumps(p.to_dict()) + "\n" for p in demo_prompts[:n]))
    return path


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory, demo_prompts):
    """An extract run of tiny-neox on six prompts (quiet)."""
    from geomprobe import run

    base = tmp_path_factory.mktemp("notebook")
    config = RunConfig(model="tiny-neox", prompts=str(_prompts(base, demo_prompts)), out=str(base / "run"),
                       device="cpu")
    return run(config, ExtractConfig(n_boot=50), quiet=True), config


# --- reprs and cards --------------------------------------------------------------------------------------------

@pytest.mark.slow
def test_run_repr_is_a_few_lines_with_status_and_figures(tiny_run):
    run_dir, _ = tiny_run
    text = repr(load_run(run_dir))
    assert len(text) <= REPR_MAX and len(text.splitlines()) <= 6, text
    assert text.splitlines()[0] == f"Run {run_dir} (tiny-neox; complete)"
    line = next(line for line in text.splitlines() if line.strip().startswith("extract"))
    assert "complete" in line and "next-token entropy" in line and "bits" in line, text
    assert "schema_version" not in text and "versions" not in text  # not the manifest or results dumped


def test_run_repr_stays_short_with_many_suites_and_long_errors(tmp_path):
    suites = {f"suite{i}": {"status": "failed", "error": "x" * 500} for i in range(9)}
    run = Run(path=tmp_path / ("deep/" * 30), manifest={"status": "failed", "model": {"spec": "m" * 300},
                                                         "suites": suites}, notes=["n" * 400, "second"])
    text = repr(run)
    assert len(text) <= REPR_MAX, len(text)
    assert "... and 3 more suites" in text and "2 notes" in text


def test_run_card_shows_the_verdict_and_escapes(tmp_path):
    verdict = {"label": "partial", "n_met": 2, "n_criteria": 3, "summary": "keys <met>; focusing [not met]"}
    run = Run(path=tmp_path, manifest={"status": "complete", "model": {"spec": "tiny-<neox>"},
                                       "suites": {"geometry": {"status": "complete"},
                                                  "sula": {"status": "skipped", "why": "needs a causal LM"}}},
              results={"geometry": {"verdict": verdict}}, notes=["<script>alert(1)</script>"])
    card = run._repr_html_()
    assert "<script>" not in card and "&lt;script&gt;" in card and "tiny-&lt;neox&gt;" in card
    assert "verdict: <b>partial</b> (2/3)" in card and "keys &lt;met&gt;" in card
    assert "needs a causal LM" in card and "skipped" in card
    assert "verdict partial (2/3)" in repr(run).splitlines()[1]  # the verdict first among the figures
    assert run.summary()["verdict"]["label"] == "partial"


@pytest.mark.slow
def test_run_and_extraction_cards_of_a_real_run(tiny_run):
    from geomprobe import load_extraction

    run_dir, _ = tiny_run
    card = load_run(run_dir)._repr_html_()
    for text in ("tiny-neox", "extract", "complete", "next-token entropy", "bits", str(run_dir)):
        assert text in card, text
    extraction = load_extraction(run_dir / "extraction")
    html = extraction._repr_html_()
    assert "<b>Extraction</b>: 6 prompts" in html and "<code>values</code>" in html and "float32" in html
    assert "[" + ", ".join(map(str, extraction.values.shape)) + "]" in html
    assert len(repr(extraction)) < 600


# --- run(quiet=True) --------------------------------------------------------------------------------------------

@pytest.mark.slow
def test_quiet_prints_nothing_where_a_default_run_prints_tables(tiny_run, capfd):
    from geomprobe import run

    run_dir, config = tiny_run
    records = []
    handler = logging.Handler(logging.DEBUG)
    handler.emit = records.append
    logger = logging.getLogger("geomprobe")
    logger.addHandler(handler)
    previous = logger.level
    logger.setLevel(logging.DEBUG)
    try:
        assert run(config, ExtractConfig(n_boot=50)).path == run_dir.path  # a rerun: resumes, prints its table again
        loud = capfd.readouterr()
        assert "next-token entropy" in loud.out and records
        records.clear()
        assert run(config, ExtractConfig(n_boot=50), quiet=True).path == run_dir.path
        quiet = capfd.readouterr()
        assert (quiet.out, quiet.err, records) == ("", "", [])
        assert logger.level == logging.DEBUG  # put back
        run(config, ExtractConfig(n_boot=50), progress=False)  # progress=False as before: no table either
        assert capfd.readouterr().out == ""
    finally:
        logger.removeHandler(handler)
        logger.setLevel(previous)
    with pytest.raises(ConfigError, match="quiet=True prints nothing"):
        run(config, ExtractConfig(n_boot=50), quiet=True, progress=True)


# --- python -m geomprobe, completion, --json --------------------------------------------------------------------

@pytest.mark.slow
def test_python_dash_m_geomprobe_is_the_cli():
    done = subprocess.run([sys.executable, "-m", "geomprobe", "--help"], capture_output=True, text=True, timeout=120,
                          env={"COLUMNS": "200", "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"})
    assert done.returncode == 0, done.stderr
    assert "Usage: python -m geomprobe" in done.stdout
    for command in ("run", "plan", "models", "suites", "--install-completion", "--show-completion"):
        assert command in done.stdout, command


def test_completion_script_is_available(monkeypatch):
    # typer detects the shell from the process tree (under make: sh, which it does not support); with
    # detection off, --show-completion takes the shell as its value
    monkeypatch.setenv("_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION", "1")
    done = runner.invoke(app, ["--show-completion", "bash"], prog_name="geomprobe")
    assert done.exit_code == 0, done.output
    assert "_GEOMPROBE_COMPLETE" in done.stdout and "complete_bash" in done.stdout


def test_models_and_suites_json_parse():
    models = runner.invoke(app, ["models", "--json"])
    assert models.exit_code == 0, models.output
    aliases = {entry["alias"]: entry for entry in json.loads(models.stdout)}
    assert aliases["tiny-neox"]["cached"] == "built-in" and aliases["tiny-neox"]["n_layers"] == 4
    suites = runner.invoke(app, ["suites", "--json"])
    assert suites.exit_code == 0, suites.output
    listed = {entry["name"]: entry for entry in json.loads(suites.stdout)}
    assert list(listed) == list(SUITES)
    sula = {option["name"]: option for option in listed["sula"]["options"]}
    assert sula["k_values"]["flag"] == "--k" and sula["k_values"]["default"] == [0, 1, 2, 4, 8]
    assert sula["target"]["choices"] == ["posterior", "predictive"]


@pytest.mark.slow
def test_run_json_is_the_only_thing_on_stdout(tiny_run):
    run_dir, config = tiny_run
    done = runner.invoke(app, ["run", "--model", "tiny-neox", "--prompts", config.prompts, "--out", str(run_dir),
                               "--device", "cpu", "--n-boot", "50", "--json"])
    assert done.exit_code == 0, done.output
    summary = json.loads(done.stdout)
    assert summary["run_dir"] == str(run_dir) and summary["status"] == "complete" and summary["model"] == "tiny-neox"
    extract = summary["suites"]["extract"]
    assert extract["status"] == "complete" and Path(extract["results"]).is_file()
    figures = {figure["statistic"]: figure for figure in extract["headlines"]}
    assert figures["next_entropy_bits"]["unit"] == "bits" and len(figures["next_entropy_bits"]["ci95"]) == 2
    assert "next-token entropy" in done.stderr  # the summary table, moved to stderr


# --- configs as plain values ------------------------------------------------------------------------------------

def _round_trips(config, dump, load):
    again = type(config).from_dict(load(dump(config.to_dict())))
    assert again == config, (again, config)


def test_configs_round_trip_through_json_and_yaml():
    run_config = RunConfig(model="tiny-neox", layers=(0, 2), readouts=("values", "z"), tokens=(" dax", " lug"),
                           dtype="bfloat16", batch_size=4, seed=7, overwrite=True)
    formats = [(json.dumps, json.loads)]
    if _has_yaml():  # YAML where PyYAML is installed
        import yaml

        formats.append((yaml.safe_dump, yaml.safe_load))
    for dump, load in formats:
        _round_trips(run_config, dump, load)
        _round_trips(RunConfig(), dump, load)
        for spec in SUITES.values():
            _round_trips(spec.config(), dump, load)
            _round_trips(spec.config(n_boot=123), dump, load)
    from geomprobe.suites.sula import SulaConfig

    assert SulaConfig.from_dict({"k": [0, 2], "n-per-k": 5}) == SulaConfig(k_values=(0, 2), n_per_k=5)  # flag names


def _has_yaml() -> bool:
    from importlib.util import find_spec

    return find_spec("yaml") is not None


def test_from_dict_refuses_unknown_keys_and_bad_values_in_one_line():
    with pytest.raises(ConfigError) as error:
        RunConfig.from_dict({"model": "tiny-neox", "modle": "x"})
    assert "unknown option 'modle'" in str(error.value) and "\n" not in str(error.value)
    with pytest.raises(ConfigError, match="unknown option 'n_per_k'"):
        ExtractConfig.from_dict({"n_per_k": 3})
    with pytest.raises(ConfigError, match="--seed must be >= 0"):
        RunConfig.from_dict({"seed": -1})
    with pytest.raises(ConfigError, match="takes a mapping"):
        RunConfig.from_dict(["model"])


@pytest.mark.slow
def test_a_config_holding_a_model_object_cannot_be_written(load_tiny):
    config = RunConfig(model=load_tiny("tiny-neox").model)
    with pytest.raises(ConfigError) as error:
        config.to_dict()
    assert "a model object cannot be written to a file" in str(error.value) and "\n" not in str(error.value)


def test_yaml_without_pyyaml_is_one_line(tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text("model: tiny-neox\n")
    code = ("import sys; sys.modules['yaml'] = None\n"  # PyYAML not importable
            "from geomprobe.config import read_config_file\n"
            "from geomprobe.errors import ConfigError\n"
            f"try:\n    read_config_file({str(path)!r})\nexcept ConfigError as e:\n    print(e)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "YAML config files need PyYAML: pip install pyyaml (or write the file as JSON)"


def test_config_file_errors_are_one_line(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"suite": "extract", "bogus": 1}')
    done = runner.invoke(app, ["run", "--config", str(bad)])
    assert done.exit_code == 2 and done.stderr.count("\n") == 1, done.output
    assert "unknown option 'bogus'" in done.stderr
    bad.write_text('{"suite": "extract"')
    done = runner.invoke(app, ["run", "--config", str(bad)])
    assert done.exit_code == 2 and "is not valid JSON" in done.stderr
    bad.write_text('{"suite": "extract", "n_per_k": 3}')
    done = runner.invoke(app, ["run", "--config", str(bad)])
    assert done.exit_code == 2 and "n_per_k is an option of the sula, ablation suites, not of extract" in done.stderr
    with pytest.raises(ConfigError, match="cannot read it"):
        read_config_file(tmp_path / "missing.json")


@pytest.mark.slow
@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_run_config_file_with_a_flag_overriding_it(tmp_path, demo_prompts, suffix):
    if suffix == ".yaml" and not _has_yaml():
        pytest.skip("PyYAML is not installed")
    out = tmp_path / "run"
    written = write_config_file(tmp_path / f"run{suffix}", RunConfig(model="tiny-neox", prompts=str(_prompts(
        tmp_path, demo_prompts)), out=str(out), device="cpu", layers=(0, 1), seed=3), ExtractConfig(n_boot=40))
    assert read_config_file(written)["suite"] == "extract"
    done = runner.invoke(app, ["run", "--config", str(written), "--layers", "2", "--json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["run_dir"] == str(out)
    entry = json.loads((out / "manifest.json").read_text())["suites"]["extract"]
    assert entry["run_config"]["layers"] == [2]  # the flag over the file
    assert entry["run_config"]["seed"] == 3 and entry["options"]["n_boot"] == 40  # the file over the defaults
