"""The command line starts without the heavy libraries: typer builds every command's options from
the suite registry (geomprobe.commandline.option_specs imports geomprobe.suites and each suite
package), so a module-level import of torch, scipy, transformers or scikit-learn anywhere on that
path costs seconds on every call, `geomprobe --help` and a sweep refused before any model loads
alike. Those imports belong inside the functions that use them."""

import json
import os
import subprocess
import sys

import pytest

HEAVY = ("torch", "scipy", "transformers", "sklearn")


def _heavy_loaded(code: str, env=None) -> tuple[list[str], subprocess.CompletedProcess]:
    """(the HEAVY modules in sys.modules once `code` has run in a fresh interpreter, the process):
    read at exit, so that code which ends in SystemExit is checked too."""
    probe = ("import atexit, json, sys\n"
             f"atexit.register(lambda: print(json.dumps([m for m in {HEAVY!r} if m in sys.modules])))\n" + code)
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120,
                            env={**os.environ, **(env or {})})
    assert result.stdout.strip(), result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1]), result


def test_option_specs_and_the_cli_import_no_heavy_library():
    code = "from geomprobe.commandline import option_specs\noption_specs()\nimport geomprobe.cli\nimport geomprobe.push\n"
    heavy, result = _heavy_loaded(code)
    assert heavy == [], result.stderr


@pytest.mark.slow
def test_a_sweep_refused_for_an_uncached_model_imports_no_heavy_library(tmp_path):
    env = {"HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "1"}
    code = ("import sys\nfrom geomprobe.cli import main\n"
            f"sys.argv = ['geomprobe', 'sweep', '--models', 'pythia-160m', '--revisions', 'step0,step1000', "
            f"'--suites', 'sula', '--out', {str(tmp_path / 'sweep')!r}]\nmain()\n")
    heavy, result = _heavy_loaded(code, env)
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "not in the local Hugging Face cache" in lines[0], result.stderr
    assert heavy == []
