"""Results as objects (issue 42 item 2): run() returns the Run, prompts given as a list, the report's
figures as plotly objects, tables as DataFrames, extractions as xarray, progress in Jupyter."""

import json
import os
from pathlib import Path

import numpy as np
import pytest

from geomprobe.config import RunConfig
from geomprobe.errors import ConfigError, PromptFileError
from geomprobe.prompts import Prompt, prompts_from
from geomprobe.results import Run, load_run


@pytest.fixture(scope="module")
def geometry_run(tmp_path_factory):
    """A small geometry run of tiny-neox (two untrained copies), returned as run() returns it."""
    from geomprobe import run
    from geomprobe.suites.geometry import GeometryConfig

    out = tmp_path_factory.mktemp("objects") / "run"
    return run(RunConfig(model="tiny-neox", out=str(out), device="cpu"),
               GeometryConfig(n_boot=20, n_null=10, init_seeds=1, null="init:2", n_per_quintile=0), quiet=True)


@pytest.mark.slow
def test_run_returns_a_run_that_stands_for_its_directory(geometry_run):
    assert isinstance(geometry_run, Run)
    directory = geometry_run.path
    assert os.fspath(geometry_run) == str(directory) == str(geometry_run)
    assert Path(geometry_run) == directory and (geometry_run / "manifest.json").is_file()
    again = load_run(geometry_run)  # a Run is read again from its directory
    assert again.path == directory and again.results == geometry_run.results
    assert geometry_run.status("geometry") == "complete"
    assert repr(geometry_run).splitlines()[0] == f"Run {directory} (tiny-neox; complete)"


@pytest.mark.slow
def test_figures_are_the_reports_as_plotly_objects(geometry_run):
    import plotly.graph_objects as go

    from geomprobe.report.figures import Figure, run_figure_families
    from geomprobe.report.rundata import load_run as report_data

    data = report_data(geometry_run.path)
    drawn = [(family.section, item.title) for family in run_figure_families()
             for item in family.draw(data) if isinstance(item, Figure)]
    figures = geometry_run.figures()
    assert list(figures) == [title for _, title in drawn] and len(figures) >= 5
    for (section, _), fig in zip(drawn, figures.values()):
        assert isinstance(fig, go.Figure) and fig.layout.meta["section"] == section and fig.layout.meta["caption"]
    manifold = geometry_run.figures(section="Value manifold")
    assert manifold and set(manifold) < set(figures)
    with pytest.raises(ConfigError) as refused:
        geometry_run.figures(section="Value manfold")
    assert "\n" not in str(refused.value) and "'Value manifold'" in str(refused.value)


@pytest.mark.slow
def test_key_cosine_heatmaps_show_the_suites_numbers(geometry_run):
    from geomprobe import plot

    keys = geometry_run.results["geometry"]["key_orthogonality"]
    heatmap = plot.key_cosines(geometry_run)
    np.testing.assert_allclose(np.array(heatmap.data[0].z, dtype=float), np.array(keys["per_head"]), rtol=0, atol=0)
    assert f"{keys['mean']:.3f}" in heatmap.layout.title.text
    assert f"{keys['baselines']['init']['mean']:.3f}" in heatmap.layout.title.text
    # one head's matrix from the weights: its off-diagonal mean is the suite's number for that head
    matrix = plot.key_cosine_matrix("tiny-neox", layer=2, head=1)
    z = np.array(matrix.data[0].z, dtype=float)
    assert z.shape[0] == z.shape[1] and np.allclose(np.diag(z), 1.0)
    d = z.shape[0]
    assert (z.sum() - np.trace(z)) / (d * (d - 1)) == pytest.approx(keys["per_head"][2][1], abs=1e-6)
    with pytest.raises(ConfigError, match="distinct key heads"):
        plot.key_cosine_matrix("tiny-neox", layer=0, head=99)


@pytest.mark.slow
def test_tables_come_back_as_data_frames(geometry_run):
    from geomprobe.compare import aggregate, compare

    rows = aggregate([geometry_run.path]).rows
    frame = geometry_run.frame()
    assert len(frame) == len(rows) and list(frame.columns) == list(rows[0])
    assert frame["statistic"].tolist() == [row["statistic"] for row in rows]
    tidy = compare([geometry_run], layout="tidy")
    assert isinstance(tidy, list) and tidy == rows  # still the list of dicts it was
    assert tidy.frame().equals(frame)


def test_prompt_lists_become_records_with_ids():
    records = prompts_from(["The cat sat", {"text": "Two plus", "domain": "math"}, Prompt("own", "A b c")])
    assert [r["id"] for r in records] == ["prompt-1", "prompt-2", "own"]
    assert records[1]["domain"] == "math" and all(set(r) == {"id", "text", "domain", "source"} for r in records)
    config = RunConfig(model="tiny-neox", prompts=["a b", "c d"])
    assert RunConfig.from_dict(json.loads(json.dumps(config.to_dict()))) == config


@pytest.mark.parametrize("values, words", [
    ([], "the list is empty"),
    ([""], 'prompts[0]: "text" must be a non-empty string'),
    (["fine", 3], "prompts[1]: expected a string or a record"),
    ([{"id": "a"}], 'prompts[0]: "text" must be'),
    ([{"text": "x", "idd": 1}], "prompts[0]: unknown key 'idd'"),
    (["a", {"id": "prompt-1", "text": "b"}], 'prompts[1]: duplicate id "prompt-1"'),
    (["ok", "bad \ud800 surrogate"], "prompts[1]: the text is not valid Unicode"),
    ("just a string", None),
])
def test_bad_prompt_lists_are_refused_in_one_line(values, words):
    if words is None:  # a bare string is a file path, and a missing one says so
        with pytest.raises(PromptFileError, match="does not exist"):
            from geomprobe.prompts import given_prompts

            given_prompts(values)
        return
    with pytest.raises(PromptFileError) as refused:
        RunConfig(model="tiny-neox", prompts=values)
    assert words in str(refused.value) and "\n" not in str(refused.value)


@pytest.mark.slow
def test_prompts_given_in_python_equal_the_same_prompts_from_a_file(tmp_path):
    from geomprobe import load_extraction, run

    texts = ["The cat sat on the", "Two plus two is", "Paris is the capital of"]
    listed = run(RunConfig(model="tiny-neox", prompts=texts, out=str(tmp_path / "list"), device="cpu"), "extract",
                 quiet=True)
    file = tmp_path / "p.jsonl"
    file.write_text("".join(json.dumps({"id": f"prompt-{i}", "text": t}) + "\n" for i, t in enumerate(texts, 1)))
    filed = run(RunConfig(model="tiny-neox", prompts=str(file), out=str(tmp_path / "file"), device="cpu"), "extract",
                quiet=True)
    a, b = load_extraction(listed / "extraction"), load_extraction(filed / "extraction")
    assert a.prompt_ids == b.prompt_ids == ["prompt-1", "prompt-2", "prompt-3"]
    np.testing.assert_array_equal(np.asarray(a["values"]), np.asarray(b["values"]))
    recorded = listed.manifest["suites"]["extract"]
    assert recorded["run_config"]["prompts"].startswith("3 prompts given in Python (sha256 ")
    assert recorded["prompts"]["sha256"] == filed.manifest["suites"]["extract"]["prompts"]["sha256"]


@pytest.mark.slow
def test_extraction_as_xarray_has_named_dimensions(load_tiny):
    pytest.importorskip("xarray")
    from geomprobe import extract

    ex = extract(load_tiny("tiny-llama"), ["The cat sat on the", "Two plus two is"])
    ds = ex.to_xarray()
    assert ds["values"].dims == ("prompt", "layer", "kv_head", "d_head")
    assert ds["attn_entropy_bits"].dims == ("prompt", "layer", "head")
    assert list(ds["prompt"].values) == ex.prompt_ids and list(ds["layer"].values) == ex.layers
    np.testing.assert_array_equal(ds["values"].sel(layer=ex.layers[-1]).values, ex.layer(ex.layers[-1])["values"])
    assert json.loads(ds.attrs["geomprobe_meta"])["n_prompts"] == 2
