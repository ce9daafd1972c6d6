"""An installed wheel stands on its own: it carries the corpora and the demo prompts,
its core requirements are what the default hf backend needs, and `geomprobe run --suite geometry`
works from it, outside the checkout. Missing optional extras give one line that names the extra.

The wheel is built offline from a copy of the sources (so no build/ or egg-info lands in the
checkout) and installed into a fresh venv whose dependencies are this environment's site-packages,
reached through a bare path line in a .pth file: such a line only appends the directory to
sys.path, it does not run that directory's own .pth files, so the editable install of the
checkout stays out of the picture.
"""

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from geomprobe.cli import app
from geomprobe.corpora import CORPORA, corpus_path

ROOT = Path(__file__).resolve().parents[2]
# requirements of the optional extras only (pyproject [project.optional-dependencies])
OPTIONAL = {"transformer-lens": "tl", "bitsandbytes": "quant", "scikit-learn": "dev", "pandas": "tables"}


def _run(args, **kwargs):
    result = subprocess.run(args, capture_output=True, text=True, timeout=300, **kwargs)
    assert result.returncode == 0, f"{args}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    return result


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    if importlib.util.find_spec("setuptools") is None:
        pytest.skip("building the wheel offline (--no-build-isolation) needs setuptools in this environment")
    base = tmp_path_factory.mktemp("wheel")
    source = base / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    shutil.copytree(ROOT / "geomprobe", source / "geomprobe",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"))
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "--no-cache-dir",
          "-w", str(base / "dist"), str(source)], cwd=base)
    wheels = sorted((base / "dist").glob("geomprobe-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


@pytest.mark.slow
def test_wheel_carries_the_prompt_data_and_lean_requirements(wheel):
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        for name in CORPORA:
            member = f"geomprobe/data/corpora/{name}.jsonl"
            assert member in names, member
            assert archive.read(member) == corpus_path(name).read_bytes(), member
        assert "geomprobe/data/demo_prompts.jsonl" in names
        metadata = archive.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    requires = [line.split(":", 1)[1].strip() for line in metadata.splitlines() if line.startswith("Requires-Dist:")]
    core = [r for r in requires if "extra ==" not in r]
    for package, extra in OPTIONAL.items():
        assert not any(r.startswith(package) for r in core), (package, core)
        assert any(r.startswith(package) and f'extra == "{extra}"' in r for r in requires), (package, extra)
    torch = next(r for r in core if r.startswith("torch"))
    assert "==" not in torch and "<3" in torch, torch


@pytest.mark.slow
def test_installed_wheel_runs_the_geometry_suite_outside_the_checkout(wheel, tmp_path):
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    python = venv / "bin" / "python"
    site = Path(_run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip())
    (site / "geomprobe-test-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    _run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-cache-dir", "--target", str(site),
          str(wheel)])

    work = tmp_path / "elsewhere"  # the cwd: nothing of the checkout is importable from here
    work.mkdir()
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env["GEOMPROBE_CACHE"] = str(tmp_path / "cache")  # the tiny model is built by the installed package
    found = _run([str(python), "-c", "import geomprobe; print(geomprobe.__file__)"], cwd=work, env=env).stdout
    assert Path(found.strip()).resolve().is_relative_to(site.resolve()), found

    out = tmp_path / "run"
    _run([str(python), "-m", "geomprobe.cli", "run", "--model", "tiny-neox", "--suite", "geometry", "--out", str(out),
          "--null", "init:1", "--init-seeds", "1", "--n-boot", "20", "--n-null", "10", "--n-per-quintile", "6",
          "--max-tokens", "32", "--batch-size", "32", "--quiet"], cwd=work, env=env)
    manifest = json.loads((out / "manifest.json").read_text())
    suite = manifest["suites"]["geometry"]
    assert suite["status"] == "complete", suite
    source = suite["prompts"]["source"]
    assert source.startswith("corpus:mixed (") and str(site.resolve()) in source, source
    assert suite["prompts"]["n"] == 30
    assert (out / "geometry" / "results.json").exists()


def _fails_with_one_line(args, expected):
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and expected in lines[0], result.stderr
    assert "Traceback" not in result.output


def test_tl_backend_without_transformer_lens_names_the_extra(monkeypatch, tmp_path):
    for name in [name for name in sys.modules if name.split(".")[0] == "transformer_lens"] + ["transformer_lens"]:
        monkeypatch.setitem(sys.modules, name, None)  # None in sys.modules: the import fails, as if not installed
    _fails_with_one_line(["run", "--model", "tiny-neox", "--backend", "tl", "--out", str(tmp_path / "r"), "--quiet"],
                         "tl needs TransformerLens: pip install 'geomprobe[tl]'")
    assert not (tmp_path / "r").exists()  # refused before anything is written


def test_quantize_without_bitsandbytes_names_the_extra(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "bitsandbytes", None)
    _fails_with_one_line(["run", "--model", "tiny-neox", "--quantize", "8bit", "--out", str(tmp_path / "r"), "--quiet"],
                         "--quantize 8bit needs bitsandbytes: pip install 'geomprobe[quant]'")
