"""benchmarks/gpu_check.py: its --cpu-smoke mode runs every stage of the GPU check on the CPU with
tiny shapes (the same code path as on a GPU), and without a GPU the plain command is a no-op."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "gpu_check.py"
NO_GPU = "no CUDA GPU: nothing to check"

SUITES = ["extract", "geometry", "domain", "sula", "ablation", "mechanisms"]
BIG_SUITES = ["extract", "sula", "ablation"]
STAGES = {
    "pythia-410m": ["build", "bf16_vs_fp32", "throughput", "auto_batch", *[f"suite:{s}" for s in SUITES], "planner"],
    "llama-3.2-1b": ["build", "bf16_vs_fp32", "throughput", *[f"suite:{s}" for s in SUITES], "planner"],
    "mistral-7b": ["build", "throughput", *[f"suite:{s}" for s in BIG_SUITES], "planner"],
    "mistral-7b-4bit": ["build", "throughput", *[f"suite:{s}" for s in BIG_SUITES], "planner"],
}


def _run(args, tmp_path, timeout, **env):
    return subprocess.run([sys.executable, str(SCRIPT), *args], cwd=tmp_path, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "PYTHONPATH": str(ROOT), **env})


@pytest.mark.slow
def test_cpu_smoke_runs_every_stage(tmp_path):
    pytest.importorskip("bitsandbytes")  # the 4-bit stage quantises through bitsandbytes' CPU kernels
    out = tmp_path / "tmp.json"
    # typically 25-60 s on 2 CPU cores; the timeout leaves room for a busy machine
    result = _run(["--cpu-smoke", "--out", str(out), "--tmp", str(tmp_path / "scratch")], tmp_path, timeout=420)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    report = json.loads(out.read_text())
    expected = [f"{model}/{stage}" for model, stages in STAGES.items() for stage in stages]
    assert list(report["stages"]) == expected
    for name, record in report["stages"].items():
        assert record["status"] == "ok", (name, record)
        assert record["elapsed_s"] >= 0
    assert report["env"]["mode"] == "cpu-smoke" and report["failed"] == [] and report["skipped"] == []
    stages = report["stages"]
    for model in ("pythia-410m", "llama-3.2-1b"):
        numerics = stages[f"{model}/bf16_vs_fp32"]
        assert numerics["passed"] and all(numerics["checks"].values())
        assert 0 < numerics["values_rel_error_max_layer"] < numerics["tolerances"]["values_rel_error"]  # bf16 is real
        assert numerics["attn_entropy_max_abs_diff_bits"] < numerics["tolerances"]["attn_entropy_bits"]
        assert numerics["next_entropy_max_abs_diff_bits"] < numerics["tolerances"]["next_entropy_bits"]
    for model in STAGES:
        throughput = stages[f"{model}/throughput"]
        assert throughput["tokens"] > 0 and throughput["geomprobe_tokens_per_s"] > 0 and throughput["hf_tokens_per_s"] > 0
        assert throughput["hf_attn_implementation"] == "sdpa"
        assert stages[f"{model}/suite:sula"]["summary"]["mae_bits"] is not None
        planner = stages[f"{model}/planner"]
        assert "available" in planner
        if not planner["available"]:
            assert "planner not available" in planner["why"]
    build = stages["mistral-7b-4bit/build"]
    assert build["value_projection_class"] == "Linear4bit" and "reduced depth" in build["note"]
    assert stages["mistral-7b/suite:sula"]["options"]["null"] == "off"
    assert stages["pythia-410m/suite:geometry"]["options"]["null"] == "init:1"
    markdown = out.with_suffix(".md").read_text()
    assert markdown == report["markdown"] and "| pythia-410m/suite:domain | ok |" in markdown
    assert "bf16 against fp32" in markdown and "Throughput" in markdown
    assert (tmp_path / "scratch" / "run-pythia-410m" / "manifest.json").exists()  # --tmp is kept


@pytest.mark.slow
def test_without_gpu_prints_the_no_gpu_line(tmp_path):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA GPU")
    out = tmp_path / "never.json"
    result = _run(["--out", str(out)], tmp_path, timeout=120, CUDA_VISIBLE_DEVICES="")
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == NO_GPU
    assert not out.exists()
