"""Suites as plugins: a registered suite is in the CLI, its options are checked in one place, the
CLI refuses options no chosen suite has, several suites share one loaded model, results carry a
header and match their declared schema."""

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from geomprobe.cli import app
from geomprobe.config import RunConfig
from geomprobe.errors import ConfigError
from geomprobe.options import fields_of, flag
from geomprobe.suites import SUITES
from geomprobe.suites.base import SuiteConfig, option, register_suite, suite_prompts

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


@dataclass
class CountConfig(SuiteConfig):
    top: int = option(3, "how many of the longest prompts to list", min=1)
    unit: str = option("chars", "what a length counts")


def run_count_suite(ctx):
    prompts, source = suite_prompts(ctx)
    ctx.record_prompts(prompts, source)
    lengths = sorted(len(p.text) for p in prompts)
    return ctx.write_results({"n": len(prompts), "longest": lengths[-ctx.options.top:], "unit": ctx.options.unit})


@dataclass
class BuggyConfig(SuiteConfig):
    pass


def run_buggy_suite(ctx):
    raise ValueError("operands could not be broadcast together")  # a bug, not a user error


@pytest.fixture
def toy_suites():
    register_suite("count", CountConfig, run_count_suite, "lengths of the prompts")
    register_suite("buggy", BuggyConfig, run_buggy_suite, "fails like a bug")
    yield
    SUITES.pop("count")
    SUITES.pop("buggy")


def _one_error_line(result) -> str:
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


@pytest.mark.slow
def test_a_registered_suite_is_in_the_cli_help_and_runs(toy_suites, tmp_path, demo_prompts):
    listing = runner.invoke(app, ["suites"])
    assert listing.exit_code == 0 and "count" in listing.output and "--top" in listing.output
    help_text = runner.invoke(app, ["run", "--suite", "count", "--help"], env={"COLUMNS": "200"}).output
    assert "--top" in help_text and "--unit" in help_text and "--model" in help_text
    assert "--alpha" not in help_text and "--n-random" not in help_text  # other suites' options are hidden
    full = runner.invoke(app, ["run", "--help"], env={"COLUMNS": "200"}).output
    assert "--top" in full and "--alpha" in full

    prompts = tmp_path / "p.jsonl"
    prompts.write_text("".join(json.dumps(p.to_dict()) + "\n" for p in demo_prompts[:7]))
    out = tmp_path / "run"
    result = runner.invoke(app, ["run", "--model", "tiny-neox", "--suite", "count", "--top", "2", "--prompts",
                                 str(prompts), "--out", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    results = json.loads((out / "count" / "results.json").read_text())
    assert results["suite"] == "count" and results["model"] == "tiny-neox" and results["schema_version"] >= 2
    assert results["n"] == 7 and results["longest"] == sorted(len(p.text) for p in demo_prompts[:7])[-2:]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["suites"]["count"]["options"] == {"n_boot": 1000, "top": 2, "unit": "chars"}
    from geomprobe.report import build_report

    page = build_report([out], tmp_path / "report.html").read_text()
    assert "count suite: headline numbers" in page and "longest" in page
    assert ", ".join(str(n) for n in results["longest"]) in page
    assert _one_error_line(runner.invoke(app, ["run", "--model", "tiny-neox", "--suite", "count", "--top", "0",
                                               "--quiet"])) == "error: --top must be >= 1, got 0"


def test_options_of_other_suites_are_refused_in_one_line():
    line = _one_error_line(runner.invoke(app, ["run", "--suite", "extract", "--alpha", "0.5"]))
    assert "--alpha is an option of the sula, ablation suites, not of extract" in line
    line = _one_error_line(runner.invoke(app, ["run", "--suite", "sula", "--positions", "fnal"]))
    assert "--positions is an option of the ablation suite" in line
    line = _one_error_line(runner.invoke(app, ["run", "--suite", "ablation", "--positions", "fnal", "--quiet"]))
    assert "unknown position 'fnal'" in line and "all, final" in line
    line = _one_error_line(runner.invoke(app, ["run", "--suite", "geometry,sula", "--n-random", "3"]))
    assert "ablation" in line


def test_api_and_cli_validate_alike():
    from geomprobe.suites.ablation import AblationConfig
    from geomprobe.suites.sula import SulaConfig

    with pytest.raises(ConfigError, match="--n-random must be >= 1, got -1"):
        AblationConfig(n_random=-1)
    with pytest.raises(ConfigError, match="unknown control"):
        SulaConfig(controls="shuffled,bogus")
    assert SulaConfig(controls="none").controls == () and SulaConfig(controls=["shuffled"]).controls == ("shuffled",)
    assert AblationConfig().n_per_k == 100 and SulaConfig().n_per_k == 250  # each default written once, in its class
    with pytest.raises(ConfigError, match="--max-tokens must be >= 1"):
        RunConfig(max_tokens=0)
    with pytest.raises(ConfigError, match="takes exactly 2"):
        SulaConfig(labels="a,b,c")
    assert RunConfig(layers="3, 1").layers == (3, 1) and RunConfig(tokens=" dax, lug").tokens == (" dax", " lug")


def test_every_option_is_documented_once_and_extract_is_run_suite_extract():
    for cls in [RunConfig, *(spec.config for spec in SUITES.values())]:
        for field, _ in fields_of(cls):
            assert field.metadata.get("help"), f"{cls.__name__}.{field.name} has no help"
    from geomprobe.commandline import option_specs

    specs = option_specs()  # raises if two configs disagree about a shared name
    flags = [spec.flag for spec in specs.values()]
    assert len(flags) == len(set(flags))
    run_params = {p.name for p in _command("run").params} - {"suite"}
    extract_params = {p.name for p in _command("extract").params}
    wanted = {f.name for f, _ in fields_of(RunConfig)} | {f.name for f, _ in fields_of(SUITES["extract"].config)}
    assert extract_params >= wanted and extract_params <= run_params
    assert flag(next(f for f, _ in fields_of(SUITES["ablation"].config) if f.name == "cut_lambda")) == "--lambda"


def _command(name):
    import typer.main

    return typer.main.get_command(app).commands[name]


def test_version():
    from geomprobe import __version__

    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.output.strip() == f"geomprobe {__version__}"


def test_a_bug_in_a_suite_keeps_its_traceback_and_marks_the_suite_failed(toy_suites, tmp_path):
    out = tmp_path / "run"
    result = runner.invoke(app, ["run", "--model", "tiny-neox", "--suite", "buggy", "--out", str(out), "--quiet"])
    assert result.exit_code == 1 and isinstance(result.exception, ValueError)  # not turned into a user error
    assert "error:" not in result.output
    # said on stderr even under --quiet (errors stay), without the `error:` of a user's mistake
    assert result.stderr.startswith("buggy suite failed (ValueError: ") and "marks it failed" in result.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["suites"]["buggy"]["status"] == "failed" and "broadcast" in manifest["suites"]["buggy"]["error"]


@pytest.mark.slow
def test_several_suites_share_one_loaded_model(toy_suites, tmp_path, demo_prompts, monkeypatch):
    import geomprobe.models as models
    from geomprobe import load_run, run

    calls = []
    real = models.load_model
    monkeypatch.setattr(models, "load_model", lambda *a, **k: calls.append(a) or real(*a, **k))
    prompts = tmp_path / "p.jsonl"
    prompts.write_text("".join(json.dumps(p.to_dict()) + "\n" for p in demo_prompts[:6]))
    out = run(RunConfig(model="tiny-llama", prompts=str(prompts), out=str(tmp_path / "run")),
              ["count", CountConfig(top=1), "extract"], progress=False)
    assert len(calls) == 1
    loaded = load_run(out)
    assert loaded.suites == ["extract", "count"]  # run (registry) order and loaded.status("extract") == "complete"
    assert loaded.results["count"]["longest"] == [max(len(p.text) for p in demo_prompts[:6])]
    table = loaded.table("extract")
    assert list(table["id"]) == [p.id for p in demo_prompts[:6]] or set(table["id"]) == {p.id for p in demo_prompts[:6]}
    assert {"n_tokens", "next_entropy_bits", "attn_entropy_bits_L0"} <= set(table.columns)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["suites"]["extract"]["readouts"] == ["values"]


def test_all_skips_suites_that_cannot_run_and_says_why(tmp_path):
    from geomprobe.runner import suite_configs

    assert [c.suite for c in suite_configs("all")] == list(SUITES)
    assert [c.suite for c in suite_configs("sula,extract")] == ["extract", "sula"]  # registry order
    with pytest.raises(ConfigError, match="unknown suite 'nope'"):
        suite_configs("extract,nope")


def test_results_schema_is_documented_and_checked():
    from geomprobe.results import schema_markdown, schema_problems

    assert (ROOT / "RESULTS_SCHEMA.md").read_text() == schema_markdown() + "\n", \
        "RESULTS_SCHEMA.md is stale: regenerate it with geomprobe.results.schema_markdown()"
    header = {"schema_version": 2, "suite": "domain", "model": "m", "geomprobe_version": "0"}
    good = {**header, "readout": "values", "layer": 3, "sets": {}, "untrained_null": None, "caveat": "c"}
    assert schema_problems("domain", good) == []
    assert schema_problems("domain", {**good, "layer": "3"}) == ["domain.layer: expected int, got str"]
    assert schema_problems("domain", {k: v for k, v in good.items() if k != "sets"}) == ["domain: missing sets"]
    assert schema_problems("domain", {**good, "extra": 1}) == ["domain: unknown key extra"]
    extract = {**header, "suite": "extract", "n_prompts": 2, "layers": [{"layer": 0}], "n_tokens": {}}
    assert any("layers" in p and "missing" in p for p in schema_problems("extract", extract))


def test_registering_a_name_twice_is_an_error_unless_replace(toy_suites):
    from geomprobe.suites import unregister_suite

    with pytest.raises(ValueError, match="'count' is already registered .*run_count_suite.*replace=True"):
        register_suite("count", BuggyConfig, run_buggy_suite)
    assert SUITES["count"].run is run_count_suite  # the first one stays
    with pytest.raises(ValueError, match="'sula' is already registered"):
        register_suite("sula", CountConfig, run_count_suite)
    register_suite("count", CountConfig, run_buggy_suite, "replaced", replace=True)
    assert SUITES["count"].run is run_buggy_suite and SUITES["count"].description == "replaced"
    removed = unregister_suite("buggy")
    assert removed.run is run_buggy_suite and "buggy" not in SUITES
    register_suite("buggy", BuggyConfig, run_buggy_suite)  # free again; the fixture removes it
    with pytest.raises(KeyError, match="no suite named 'nothing'"):
        unregister_suite("nothing")


@pytest.mark.slow
def test_a_plugin_suite_is_compared_and_planned_without_faces_of_its_own(toy_suites, tmp_path, demo_prompts):
    """The toy suite of CONTRIBUTING.md supplies no compare reader and no planner: compare reads its numbers
    (short lists one row per item) and shows them in the summary, plan says it is not planned; a
    planner registered for it is used."""
    from geomprobe.compare import aggregate, plugin_columns
    from geomprobe.plan import PLANNERS, SuitePlan, plan, register_planner
    from geomprobe.runner import run

    run(RunConfig(model="tiny-neox", out=str(tmp_path / "r")), CountConfig(top=2), progress=False)
    table = aggregate([tmp_path / "r"])
    assert [row["statistic"] for row in table.rows] == ["n", "longest[0]", "longest[1]"]
    longest = json.loads((tmp_path / "r" / "count" / "results.json").read_text())["longest"]
    assert [row["value"] for row in table.rows[1:]] == longest
    assert [c[2] for c in plugin_columns(table.rows)] == ["count n", "count longest[0]", "count longest[1]"]
    lines = "\n".join(plan("tiny-neox", [CountConfig()]).lines())
    assert "not planned: no cost model" in lines
    register_planner("count", lambda ctx, options: SuitePlan("count"))
    try:
        assert "not planned" not in "\n".join(plan("tiny-neox", [CountConfig()]).lines())
        with pytest.raises(ValueError, match="already has a planner"):
            register_planner("count", lambda ctx, options: SuitePlan("count"))
    finally:
        PLANNERS.pop("count")
