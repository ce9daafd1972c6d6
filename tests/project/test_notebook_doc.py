"""docs/notebook.ipynb, executed headless in a Jupyter kernel (nbclient): every cell runs, the
progress is an HTML bar (no ipywidgets warning, no empty widget output), the run comes back as an
object with its card, its tables and its figures, and TransformerLens hook names give a cache."""

import json
import shutil
from pathlib import Path

import pytest

NOTEBOOK = Path(__file__).resolve().parents[2] / "docs" / "notebook.ipynb"


@pytest.mark.slow
def test_the_documentation_notebook_runs_in_a_kernel(tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    shutil.copy(NOTEBOOK, tmp_path / "notebook.ipynb")
    notebook = nbformat.read(tmp_path / "notebook.ipynb", as_version=4)
    assert all(not cell.get("outputs") for cell in notebook.cells if cell.cell_type == "code"), \
        "docs/notebook.ipynb is committed without outputs"
    nbclient.NotebookClient(notebook, timeout=900, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [output for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs]
    text = json.dumps(outputs)
    assert "IProgress" not in text and "ipywidgets" not in text and "Traceback" not in text
    assert not any(output.get("output_type") == "error" for output in outputs)
    assert not any(output.get("data", {}).get("application/vnd.jupyter.widget-view+json") for output in outputs)
    assert "<progress value=" in text  # the notebook bar of the run's extraction passes

    def result_of(index: int) -> dict:
        results = [o for o in notebook.cells[index].outputs if o.get("output_type") in ("execute_result",
                                                                                          "display_data")]
        assert results, notebook.cells[index].source
        return results[-1]["data"]  # the cell's value (a plotly figure displays itself)

    cache_shapes = result_of(3)["text/plain"]
    assert "blocks.0.attn.hook_pattern" in cache_shapes and "blocks.1.attn.hook_z" in cache_shapes
    assert "'blocks.1.hook_resid_post': (4, " in result_of(4)["text/plain"].replace('"', "'")
    card = result_of(6)
    assert "geomprobe run" in card["text/html"] and "sula" in card["text/html"] and "complete" in card["text/html"]
    assert "text/html" in result_of(7) and "mae_bits" in result_of(7)["text/plain"]  # DataFrames render as tables
    assert "H_bayes" in result_of(8)["text/plain"] or "H_model" in result_of(8)["text/plain"]
    assert "application/vnd.plotly.v1+json" in result_of(11) or "text/html" in result_of(11)
    last = result_of(13)["text/plain"]
    assert "hook_pattern" in last or "not installed" in last
    assert (tmp_path / "runs" / "notebook-sula" / "run.json").is_file()
