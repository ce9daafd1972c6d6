"""--wandb PROJECT (issue 42 item 3): a finished run logged to Weights & Biases in offline mode (a
local stand-in: nothing leaves the machine), everything under the run directory."""

import json
import os
import subprocess
import sys

import pytest

from geomprobe.config import RunConfig
from geomprobe.errors import ConfigError


@pytest.mark.parametrize("project", ["", "two words", "a/b/c", "x;rm"])
def test_a_project_wandb_would_refuse_is_refused_before_the_run(project):
    with pytest.raises(ConfigError, match="--wandb"):
        RunConfig(model="tiny-neox", wandb=project)


@pytest.mark.slow
def test_a_run_is_logged_offline_inside_its_directory(tmp_path):
    pytest.importorskip("wandb")
    out, home = tmp_path / "run", tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "WANDB_MODE": "offline", "HOME": str(home)}
    for name in ("WANDB_DIR", "WANDB_DATA_DIR", "WANDB_CACHE_DIR", "WANDB_CONFIG_DIR", "XDG_CACHE_HOME",
                 "XDG_CONFIG_HOME"):
        env.pop(name, None)
    env["GEOMPROBE_CACHE"] = os.environ.get("GEOMPROBE_CACHE", str(tmp_path / "cache"))
    done = subprocess.run([sys.executable, "-m", "geomprobe", "run", "--model", "tiny-neox", "--suite", "extract",
                           "--limit", "4", "--out", str(out), "--wandb", "geomprobe-tests", "--quiet"],
                          capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "wandb" not in done.stderr  # --quiet: W&B says nothing either
    [offline] = list((out / "wandb").glob("offline-run-*"))
    record = next(offline.glob("run-*.wandb")).read_bytes()
    document = json.loads((out / "run.json").read_text())
    for figure in document["suites"]["extract"]["headlines"]:
        assert f"extract/{figure['statistic']}".encode() in record  # every headline in the summary
    assert b"geomprobe-tiny-neox-run" in record  # the artifact holding run.json
    tables = {path.name.split("_")[0]: json.loads(path.read_text()) for path in offline.rglob("*.table.json")}
    assert {"tidy", "layers"} <= set(tables), sorted(tables)
    frame_rows = len(document["suites"]["extract"]["headlines"])
    assert len(tables["tidy"]["data"]) >= frame_rows and "statistic" in tables["tidy"]["columns"]
    layers = document["suites"]["extract"]["results"]["layers"]
    assert len(tables["layers"]["data"]) == len(layers) and "layer" in tables["layers"]["columns"]
    assert not any(home.rglob("*")), sorted(map(str, home.rglob("*")))  # nothing outside the run
    assert not (tmp_path / "wandb").exists()
