"""Aggregation across runs: `geomprobe compare` over any finished suites as one
tidy table labelled model@revision, the statistics against training step, and one report for many
runs (cross-run section, per-run sections collapsed and drawn when opened, small).

Real runs of two tiny models (tiny-neox: extract, geometry, sula; tiny-llama: geometry, mechanisms)
and of a 30-step wind tunnel (geometry). Checkpoints: built-in tiny models have no revisions and a
wind tunnel's checkpoints are not loadable by revision yet, so the trajectory tests FAKE them: they
copy a real run and edit its manifest's revision (step0, step1000, step143000; step-0, step-10) and
scale one statistic in the copy's results.json. The final wind-tunnel run is not faked: its revision
is none and its step, 30, is read from the training run's metrics.json."""

import csv
import json
import re
import shutil
import time

import pytest
from typer.testing import CliRunner

from geomprobe.cli import app
from geomprobe.compare import aggregate, compare, identities, parse_step, value_of
from geomprobe.errors import GeomprobeError
from geomprobe.report import build_report
from geomprobe.report.trajectories import trajectory_figures, zero_position
from geomprobe.runner import RunConfig, run
from geomprobe.suites.extract import ExtractConfig
from geomprobe.suites.geometry import GeometryConfig
from geomprobe.suites.mechanisms import MechanismsConfig
from geomprobe.suites.sula import SulaConfig

SMALL = dict(n_per_quintile=5, n_boot=50, n_null=20, init_seeds=1, null="init:3")


def write_prompts(path, prompts):
    path.write_text("".join(json.dumps(p.to_dict()) + "\n" for p in prompts))
    return str(path)


@pytest.fixture(scope="module")
def runs(tmp_path_factory, demo_prompts):
    import torch

    from geomprobe.windtunnel.models import TransformerSpec
    from geomprobe.windtunnel.prompts import task_prompts
    from geomprobe.windtunnel.tasks import make_task
    from geomprobe.windtunnel.train import TrainConfig, train

    base = tmp_path_factory.mktemp("compare-runs")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        prompts = write_prompts(base / "demo.jsonl", demo_prompts)
        neox, llama = base / "tiny-neox", base / "tiny-llama"
        run(RunConfig(model="tiny-neox", prompts=prompts, out=str(neox)),
            [ExtractConfig(n_boot=50), GeometryConfig(**SMALL)], progress=False)
        run(RunConfig(model="tiny-neox", out=str(neox)), SulaConfig(n_per_k=6, n_boot=50), progress=False)
        run(RunConfig(model="tiny-llama", prompts=prompts, out=str(llama)),
            [GeometryConfig(**SMALL), MechanismsConfig(n_boot=50, init_seeds=1)], progress=False)
        tunnel = base / "wt-sula"
        train(TrainConfig(task="sula", steps=30, batch_size=32, eval_sequences=64, n_checkpoints=2, log_every=5,
                          spec=TransformerSpec(32, 3, 2, 64)), tunnel, progress=False)
        probe = base / "wt-probe"
        sequences = write_prompts(base / "sula.jsonl", task_prompts(make_task("sula"), n=40, seed=0))
        run(RunConfig(model=str(tunnel), prompts=sequences, out=str(probe)), GeometryConfig(**SMALL), progress=False)
    finally:
        torch.set_num_threads(threads)
    return {"neox": neox, "llama": llama, "tunnel": tunnel, "probe": probe, "base": base}


def results(run_dir, suite):
    return json.loads((run_dir / suite / "results.json").read_text())


def fake_revision(source, target, revision, scale=None):
    """A copy of a real run whose manifest says it probed `revision` (FAKED: the weights are the
    source run's), with geometry's PC1+PC2 multiplied by `scale`."""
    shutil.copytree(source, target)
    manifest = json.loads((target / "manifest.json").read_text())
    manifest["model"]["revision"] = revision
    (target / "manifest.json").write_text(json.dumps(manifest))
    if scale is not None:
        geometry = results(target, "geometry")
        geometry["value_manifold"]["pc12"] *= scale
        (target / "geometry" / "results.json").write_text(json.dumps(geometry))
    return target


def test_parse_step():
    assert [parse_step(r) for r in ("step0", "step1000", "step-1000", "step_0001000", "STEP12")] == [0, 1000, 1000,
                                                                                                    1000, 12]
    assert [parse_step(r) for r in (None, "main", "v1.0", "a1b2c3", "step", "steps10")] == [None] * 6


@pytest.mark.slow
def test_the_tidy_table_copies_every_suites_numbers(runs):
    table = aggregate([runs["neox"], runs["llama"]])
    assert table.suites == {"tiny-neox@main": ["extract", "geometry", "sula"],
                            "tiny-llama@main": ["geometry", "mechanisms"]}
    rows = table.rows
    assert len({(r["run"], r["suite"], r["statistic"]) for r in rows}) == len(rows)  # one row per run x suite x stat
    for run_dir, label in ((runs["neox"], "tiny-neox@main"), (runs["llama"], "tiny-llama@main")):
        geometry = results(run_dir, "geometry")
        vm, focus = geometry["value_manifold"], geometry["attention_focusing"]
        for statistic, value, ci in (("pc1", vm["pc1"], vm["pc1_ci95"]), ("pc12", vm["pc12"], vm["pc12_ci95"]),
                                     ("focusing", focus["focusing"], focus["focusing_ci95"])):
            row = value_of(rows, label, "geometry", statistic)
            assert (row["value"], [row["ci_low"], row["ci_high"]], row["n"]) == (value, ci, vm["n_prompts"])
            cmp = geometry["untrained_null"]["comparisons"][statistic]
            assert (row["untrained_null_mean"], row["diff_vs_untrained"], [row["diff_ci_low"], row["diff_ci_high"]],
                    row["status_vs_untrained"]) == (cmp["null_mean"], cmp["difference"]["value"],
                                                    cmp["difference"]["ci95"], cmp["status"])
            assert (row["model"], row["revision"], row["step"]) == (label.split("@")[0], "main", None)
        keys = geometry["key_orthogonality"]
        assert value_of(rows, label, "geometry", "keys_mean_abs_cos")["value"] == keys["mean"]
        assert value_of(rows, label, "geometry", "keys_mean_abs_cos")["status_vs_untrained"] == \
            geometry["untrained_null"]["comparisons"]["keys"]["status"]
        assert value_of(rows, label, "geometry", "keys_fraction_below")["value"] == keys["fraction_below"]
        verdict = value_of(rows, label, "geometry", "verdict")
        assert (verdict["value"], verdict["text"]) == (geometry["verdict"]["n_met"], geometry["verdict"]["label"])
    sula = results(runs["neox"], "sula")
    main = sula["conditions"]["main"]
    for statistic, entry in (("mae_bits", main["mae_bits"]), ("rho_pc1_H_bayes_given_k", main["rho_pc1_H_bayes_given_k"]),
                             ("rho_pc1_H_bayes", main["rho_pc1_H_bayes"]), ("rho_k_pc1", main["rho_k_pc1"]),
                             ("mae_baseline_k_only", main["mae_baselines"]["k_only"]),
                             ("mae_bits[shuffled]", sula["conditions"]["shuffled"]["mae_bits"])):
        row = value_of(rows, "tiny-neox@main", "sula", statistic)
        assert (row["value"], [row["ci_low"], row["ci_high"]], row["method"], row["n"]) == (
            entry["value"], entry["ci95"], entry["method"], entry["n"]), statistic
    within = value_of(rows, "tiny-neox@main", "sula", "rho_pc1_H_bayes_within_k")
    assert within["p_value"] == main["rho_pc1_H_bayes_within_k"]["pvalue"]
    for name, cmp in sula["untrained_null"]["comparisons"].items():  # each comparison: its row or one of its own
        row = value_of(rows, "tiny-neox@main", "sula", name)
        assert (row["untrained_null_mean"], row["status_vs_untrained"]) == (cmp["null_mean"], cmp["status"])
    extract = results(runs["neox"], "extract")
    row = value_of(rows, "tiny-neox@main", "extract", "next_entropy_bits")
    assert (row["value"], [row["ci_low"], row["ci_high"]]) == (extract["next_entropy_bits"]["value"],
                                                               extract["next_entropy_bits"]["ci95"])
    mechanisms = results(runs["llama"], "mechanisms")
    row = value_of(rows, "tiny-llama@main", "mechanisms", "focusing")
    assert row["value"] == mechanisms["attention_focusing"]["focusing"]
    assert row["status_vs_untrained"] == mechanisms["untrained_null"]["comparisons"]["focusing"]["status"]


@pytest.mark.slow
def test_compare_writes_csv_json_and_parquet_that_read_back_exactly(runs, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["compare", str(runs["neox"]), str(runs["llama"]), "-o", "out/table"])
    assert result.exit_code == 0, result.output
    assert "tiny-neox@main" in result.output and "tiny-llama@main" in result.output
    rows = aggregate([runs["neox"], runs["llama"]]).rows
    with open(tmp_path / "out" / "table.csv") as handle:
        read = list(csv.DictReader(handle))
    assert len(read) == len(rows)
    for row, back in zip(rows, read):
        assert back["statistic"] == row["statistic"] and back["run"] == row["run"]
        for column in ("value", "ci_low", "ci_high", "untrained_null_mean", "diff_vs_untrained"):
            assert (float(back[column]) if back[column] else None) == row[column], (row["statistic"], column)
    payload = json.loads((tmp_path / "out" / "table.json").read_text())
    assert payload["layout"] == "tidy" and payload["rows"] == [{c: r[c] for c in payload["columns"]} for r in rows]
    assert [run["label"] for run in payload["runs"]] == ["tiny-neox@main", "tiny-llama@main"]
    pandas = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    frame = pandas.read_parquet(tmp_path / "out" / "table.parquet")
    assert len(frame) == len(rows) and list(frame["value"].fillna(-999)) == [
        -999 if r["value"] is None else r["value"] for r in rows]
    # paper III's Table 2 stays available
    result = CliRunner().invoke(app, ["compare", str(runs["neox"]), "--layout", "table2", "-o", "t2"])
    assert result.exit_code == 0 and (tmp_path / "t2.md").read_text().startswith("| run ")
    assert compare([runs["neox"]])[0]["label"] == "tiny-neox@main"  # the Python default: Table 2 rows, as before
    bad = CliRunner().invoke(app, ["compare", str(runs["neox"]), "--layout", "wide"])
    assert bad.exit_code == 2 and "--layout must be one of tidy, table2" in bad.stderr


@pytest.mark.slow
def test_runs_without_paper_code_definitions_get_no_paper_code_rows(runs):
    """The rows of --definitions paper-code (tests/report/test_paper_code_report.py) only where a suite ran with it."""
    rows = aggregate([runs["neox"], runs["llama"]]).rows
    assert results(runs["neox"], "sula").get("definitions", "geomprobe") == "geomprobe"
    assert not [row["statistic"] for row in rows if row["statistic"].startswith("paper_code.")]


@pytest.mark.slow
def test_compare_reads_a_run_without_a_geometry_suite(runs, tmp_path):
    """The tester's case: a SULA-only run (`no finished geometry suite` before)."""
    only = tmp_path / "sula-only"
    shutil.copytree(runs["neox"], only)
    manifest = json.loads((only / "manifest.json").read_text())
    for suite in ("extract", "geometry"):
        shutil.rmtree(only / suite)
        del manifest["suites"][suite]
    manifest["suites"]["sula"]["status"] = "complete"
    (only / "manifest.json").write_text(json.dumps(manifest))
    table = aggregate([only])
    assert table.suites == {"tiny-neox@main": ["sula"]}
    assert value_of(table.rows, "tiny-neox@main", "sula", "mae_bits")["value"] == \
        results(only, "sula")["conditions"]["main"]["mae_bits"]["value"]
    result = CliRunner().invoke(app, ["compare", str(only)])
    assert result.exit_code == 0, result.output
    # an unfinished suite is left out, and said
    manifest["suites"]["sula"]["status"] = "failed"
    (only / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(GeomprobeError, match="no finished suite"):
        aggregate([only])
    with pytest.raises(GeomprobeError, match="no finished geometry suite"):
        compare([only], layout="table2")


@pytest.mark.slow
def test_runs_are_labelled_by_revision_and_duplicates_by_directory(runs, tmp_path):
    dirs = [fake_revision(runs["neox"], tmp_path / f"r{i}", revision)
            for i, revision in enumerate(["step0", "step1000", "step143000", None, "step1000"])]
    named = identities(dirs)
    assert [r.label for r in named] == ["tiny-neox@step0", "tiny-neox@step1000 (r1)", "tiny-neox@step143000",
                                        "tiny-neox@main", "tiny-neox@step1000 (r4)"]
    assert [r.step for r in named] == [0, 1000, 143000, None, 1000]
    assert {r.model for r in named} == {"tiny-neox"}
    # the final model of a wind-tunnel training run is its last step (metrics.json), not faked
    probe, = identities([runs["probe"]])
    assert (probe.model, probe.revision, probe.step) == ("wt-sula", "main", 30)
    assert probe.step_source == str(runs["tunnel"] / "metrics.json")
    tunnel, = identities([runs["tunnel"]])  # the training directory itself: no manifest
    assert (tunnel.label, tunnel.step) == ("wt-sula@main", 30)


@pytest.fixture(scope="module")
def checkpoints(runs, tmp_path_factory):
    """FAKED checkpoints (see the module docstring): tiny-neox at step0, step1000, step143000 and the
    wind tunnel at step-0 and step-10, each with PC1+PC2 scaled; plus the real final wind-tunnel run."""
    base = tmp_path_factory.mktemp("checkpoints")
    dirs = [fake_revision(runs["neox"], base / f"neox-{rev}", rev, scale) for rev, scale in
            (("step0", 0.5), ("step1000", 0.75), ("step143000", 1.0))]
    dirs += [fake_revision(runs["probe"], base / f"wt-{rev}", rev, scale) for rev, scale in
             (("step-0", 0.6), ("step-10", 0.8))]
    return dirs + [runs["probe"]]


@pytest.mark.slow
def test_trajectory_has_one_line_per_model_at_its_steps(checkpoints):
    rows = aggregate(checkpoints).rows
    figures = {f.title: f for f in trajectory_figures(rows)}
    assert {"Trajectory: value manifold PC1+PC2", "Trajectory: value manifold PC1",
            "Trajectory: attention focusing 1 - H(L-1)/H(0)"} <= set(figures)
    sula = figures["Trajectory: SULA MAE |H_model - H_bayes| (bits)"].fig  # only tiny-neox has a sula suite
    assert [t.name for t in sula.data if t.mode == "lines+markers" and t.legendgroup != "untrained"] == ["tiny-neox"]
    fig = figures["Trajectory: value manifold PC1+PC2"].fig
    lines = [t for t in fig.data if t.mode == "lines+markers" and t.legendgroup != "untrained"]
    assert sorted(t.name for t in lines) == ["tiny-neox", "wt-sula"]
    zero = zero_position([0, 1000, 143000, 10, 30])
    assert zero == 1.0  # a decade below the smallest positive step (10)
    expected = {"tiny-neox": [0, 1000, 143000], "wt-sula": [0, 10, 30]}
    for line in lines:
        steps = [c[0] for c in line.customdata]
        assert steps == expected[line.name]
        assert list(line.x) == [zero if s == 0 else s for s in steps]
        source = {"tiny-neox": checkpoints[:3], "wt-sula": checkpoints[3:]}[line.name]
        assert list(line.y) == [results(d, "geometry")["value_manifold"]["pc12"] for d in source]
    axis = fig.layout.xaxis
    assert axis.type == "log" and "0" in axis.ticktext and axis.tickvals[list(axis.ticktext).index("0")] == zero
    whiskers = [t for t in fig.data if t.name and t.name.endswith("95% CI")]
    assert sorted(t.legendgroup for t in whiskers) == ["tiny-neox", "wt-sula"]
    # fewer than two steps of any model: no trajectory
    assert trajectory_figures(aggregate(checkpoints[:1] + checkpoints[-1:]).rows) == []


@pytest.mark.slow
def test_many_runs_make_one_small_report(runs, tmp_path):
    """12 runs of one model at 12 revisions (FAKED, copies): 12 distinct rows and bars, no more than
    1.5x the bytes of the single-run report, built in reasonable time."""
    single = build_report([runs["neox"]], tmp_path / "one.html")
    steps = [0, 1, 2, 4, 8, 16, 64, 256, 1000, 8000, 64000, 143000]
    dirs = [fake_revision(runs["neox"], tmp_path / "runs" / f"neox-{s}", f"step{s}", 1 - 0.05 * i)
            for i, s in enumerate(steps)]
    start = time.perf_counter()
    many = build_report(dirs, tmp_path / "twelve.html")
    seconds = time.perf_counter() - start
    ratio = many.stat().st_size / single.stat().st_size
    print(f"single {single.stat().st_size / 1e6:.2f} MB, 12 runs {many.stat().st_size / 1e6:.2f} MB "
          f"(x{ratio:.2f}) in {seconds:.1f} s")
    assert ratio <= 1.5 and seconds < 30
    text = many.read_text()
    summary = text.split('class="wide summary-table">')[1].split("</table>")[0]
    labels = re.findall(r'<a href="#run-\d+">([^<]+)</a>', summary)
    assert labels == [f"tiny-neox@step{s}" for s in steps]
    table2 = text.split('id="cross-model"')[1].split("</table>")[0]
    assert table2.count("<tr>") == 13
    assert text.count('<details class="run"') == 12
    chart = re.search(r'id="plot-1-data">(.*?)</script>', text).group(1)
    bars = [trace for trace in json.loads(chart)["data"] if trace.get("type") == "bar"]
    assert len(bars) == 3 and all(trace["x"] == labels for trace in bars)  # one bar per run in each panel
    assert "Trajectory: value manifold PC1+PC2" in text


@pytest.mark.slow
def test_many_runs_report_renders_in_headless_chromium(checkpoints, runs, tmp_path):
    from test_report import CHROMIUM, check_renders

    if CHROMIUM is None:
        pytest.skip("no chromium on PATH")
    page = build_report(checkpoints + [runs["llama"]], tmp_path / "checkpoints.html")
    dom, rendered = check_renders(page, tmp_path)
    trajectory = next(f for f in rendered if "Trajectory: value manifold PC1+PC2" in f)
    assert len(re.findall(r'class="point[ "]', trajectory)) >= 6  # the six checkpoints
