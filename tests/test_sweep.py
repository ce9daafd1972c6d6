"""`geomprobe sweep`: models x revisions, one run directory per job, through submitit's
local executor (real subprocesses), inline, and slurm (a fake sbatch: the array script is checked,
nothing is submitted); a killed job resumes, a failing one is recorded while the others finish."""

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from geomprobe.cli import app
from geomprobe.errors import ConfigError
from geomprobe.locks import is_locked
from geomprobe.sweep import PYTHIA_STEPS, log_spaced, model_revisions

runner = CliRunner()
# small settings: the tiny models' geometry suite on a few candidates, no untrained nulls
SMALL = ["--suites", "extract,geometry", "--n-per-quintile", "2", "--null", "off", "--init-seeds", "0",
         "--step0", "off", "--n-boot", "20", "--n-null", "10", "--corpus", "math"]


@pytest.fixture(scope="module")
def windtunnel(tmp_path_factory):
    """A wind tunnel trained for 20 steps: checkpoints at steps 2 and 20, and the final model."""
    from geomprobe.windtunnel.models import TransformerSpec
    from geomprobe.windtunnel.train import TrainConfig, train

    out = tmp_path_factory.mktemp("sweep-wt") / "wt"
    train(TrainConfig(task="sula", steps=20, batch_size=16, eval_sequences=32, n_checkpoints=1,
                      spec=TransformerSpec(32, 2, 2, 64)), out, progress=False)
    return out


def _one_line_error(args, expected):
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and expected in lines[0], result.stderr
    return lines[0]


def _jobs(out: Path) -> dict:
    return {job["name"]: job for job in json.loads((out / "sweep.json").read_text())["jobs"]}


def _manifest(run_dir: Path) -> dict:
    return json.loads((run_dir / "manifest.json").read_text())


def test_revision_shorthands():
    ten = model_revisions("pythia-160m", "log:10")
    steps = [int(r.removeprefix("step")) for r in ten]
    assert len(set(ten)) == 10 and steps == sorted(steps) and steps[0] == 0 and steps[-1] == 143000
    assert all(s in PYTHIA_STEPS for s in steps)
    every = model_revisions("pythia-410m", "all")
    assert len(every) == len(PYTHIA_STEPS) == 154 and every[:4] == ["step0", "step1", "step2", "step4"]
    assert every[10:12] == ["step512", "step1000"] and every[-1] == "step143000"
    assert model_revisions("pythia-160m", "main,step1000,step1000") == [None, "step1000"]
    assert log_spaced([2, 6, 20], 2) == [2, 20] and log_spaced(range(6), 6) == list(range(6))
    with pytest.raises(ConfigError, match="nearest: step1000"):
        model_revisions("pythia-160m", "step1234")
    with pytest.raises(ConfigError, match="more revisions than the 154"):
        model_revisions("pythia-160m", "log:155")
    with pytest.raises(ConfigError, match="no list of checkpoints is known for phi-2"):
        model_revisions("phi-2", "log:4")
    with pytest.raises(ConfigError, match="built-in model 'tiny-neox' has no revisions"):
        model_revisions("tiny-neox", "step0")


@pytest.mark.slow
def test_windtunnel_checkpoints_load_as_revisions(windtunnel):
    import torch

    from geomprobe.models import load_model
    from geomprobe.rundir import model_identity

    assert model_revisions(str(windtunnel), "all") == ["step-2", "step-20", None]
    assert model_revisions(str(windtunnel), "log:2") == ["step-2", "step-20"]
    assert model_revisions(str(windtunnel), "step2,final") == ["step-2", None]
    final, early, last = load_model(str(windtunnel)), load_model(f"{windtunnel}@step-2"), \
        load_model(str(windtunnel), revision="step20")
    assert (early.revision, last.revision, final.revision) == ("step-2", "step-20", None)
    assert early.checkpoint.endswith("checkpoints/step-0000002.pt") and final.checkpoint is None
    weights = [dict(m.model.named_parameters()) for m in (final, early, last)]
    assert all(torch.equal(weights[0][k], weights[2][k]) for k in weights[0])  # the last checkpoint is the final model
    assert any(not torch.equal(weights[0][k], weights[1][k]) for k in weights[0])
    identities = [model_identity(m) for m in (final, early, last)]
    assert "checkpoint" not in identities[0] and identities[1]["revision"] == "step-2"
    assert identities[1]["sha256"] == identities[0]["sha256"]  # same directory ...
    assert identities[1]["checkpoint_sha256"] != identities[2]["checkpoint_sha256"]  # ... other checkpoints
    with pytest.raises(ConfigError, match=r"no checkpoint 'step-7'.*step-2, step-20"):
        load_model(f"{windtunnel}@step-7")


@pytest.mark.slow
def test_local_sweep_kill_resume_failure_and_status(windtunnel, tmp_path):
    """A tiny model and a wind tunnel's checkpoints through submitit's LocalExecutor (a
    subprocess per job): one job is SIGKILLed mid-suite, the others finish; a rerun resumes the
    killed one to completion and leaves the done ones alone."""
    out = tmp_path / "sweep"
    models = f"tiny-llama,{windtunnel}@all"
    command = [sys.executable, "-m", "geomprobe.cli", "sweep", "--models", models, *SMALL, "--out", str(out)]
    driver = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    victim = out / "runs" / "tiny-llama@main"
    killed, deadline = None, time.time() + 150
    while driver.poll() is None and time.time() < deadline:
        holder = is_locked(victim)  # its job holds the run directory ...
        try:
            suites = _manifest(victim)["suites"]
        except (OSError, ValueError, KeyError):
            suites = {}
        if holder is not None and any(s.get("status") == "running" for s in suites.values()):  # ... inside a suite
            killed = int(re.match(r"pid (\d+)", holder).group(1))
            os.kill(killed, signal.SIGKILL)
            break
        time.sleep(0.01)
    stdout, stderr = driver.communicate(timeout=240)
    assert killed is not None and killed != driver.pid, (stdout, stderr)
    assert driver.returncode == 1, (stdout, stderr)
    slug = re.sub(r"[^A-Za-z0-9._@-]+", "_", str(windtunnel).strip("/")).strip("_")
    names = ["tiny-llama@main", f"{slug}@step-2", f"{slug}@step-20", f"{slug}@main"]
    jobs = _jobs(out)
    assert list(jobs) == names
    assert jobs["tiny-llama@main"]["status"] == "failed" and "without a result" in jobs["tiny-llama@main"]["error"]
    assert all(jobs[name]["status"] == "complete" for name in names[1:]), jobs
    assert all(jobs[name]["executor"] == "local" and jobs[name]["job_id"] for name in names)
    assert _manifest(victim)["status"] == "running"  # killed mid-way: the runner never finished it
    assert any(out.joinpath("logs").glob("*_log.err"))

    status = runner.invoke(app, ["sweep", "--status", str(out)])
    assert status.exit_code == 0, status.output
    assert "4 jobs: 3 done, 0 running, 1 failed, 0 pending" in status.output
    assert re.search(r"tiny-llama@main\s+│\s+failed", status.output)

    again = subprocess.run(command, capture_output=True, text=True, timeout=240)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "4 jobs, 3 done, 1 to run" in again.stderr and "tiny-llama@main: complete" in again.stderr  # progress
    assert "4 jobs: 4 done" in again.stdout and "to run" not in again.stdout  # the status table
    jobs = _jobs(out)
    assert jobs["tiny-llama@main"]["status"] == "complete" and jobs["tiny-llama@main"]["attempts"] == 2
    assert jobs[f"{slug}@main"]["attempts"] == 1  # done: not rerun
    manifest = _manifest(victim)
    assert manifest["status"] == "complete" and {"extract", "geometry"} <= set(manifest["suites"])
    assert "4 jobs: 4 done, 0 running, 0 failed, 0 pending" in runner.invoke(app, ["sweep", "--status", str(out)]).output

    # one run directory per checkpoint, each loaded once for both suites; the last one is the final model
    runs = {name: _manifest(out / "runs" / name) for name in names[1:4]}
    assert [m["config"]["revision"] for m in runs.values()] == ["step-2", "step-20", None]
    assert runs[f"{slug}@step-2"]["config"]["model_identity"]["checkpoint"] == "checkpoints/step-0000002.pt"
    pc1 = {name: json.loads((out / "runs" / name / "geometry" / "results.json").read_text())["value_manifold"]["pc1"]
           for name in names[1:4]}
    assert pc1[f"{slug}@step-20"] == pc1[f"{slug}@main"]


@pytest.mark.slow
def test_failing_job_is_recorded_and_done_jobs_skipped(tmp_path):
    """Inline: a hub model that is not in the (offline) cache fails with its one-line error, the
    other job completes, the sweep exits 1; a rerun skips the done job."""
    out = tmp_path / "inline"
    args = ["sweep", "--models", "nobody/no-such-model,tiny-neox", "--suites", "extract", "--n-boot", "20",
            "--out", str(out), "--executor", "inline"]
    first = runner.invoke(app, args)
    assert first.exit_code == 1, first.output
    jobs = _jobs(out)
    missing = jobs["nobody_no-such-model@main"]
    assert missing["status"] == "failed" and "not in the local Hugging Face cache" in missing["error"]
    assert "\n" not in missing["error"] and jobs["tiny-neox@main"]["status"] == "complete"
    assert _manifest(out / "runs" / "tiny-neox@main")["status"] == "complete"
    assert "2 jobs: 1 done, 0 running, 1 failed, 0 pending" in first.output
    second = runner.invoke(app, args)
    assert second.exit_code == 1 and "2 jobs, 1 done, 1 to run" in second.output, second.output
    args = args[:2] + ["tiny-neox"] + args[3:]
    # another dtype, or other options for a finished suite: refused before any job starts
    _one_line_error(args + ["--dtype", "bfloat16"], "holds a run with another configuration (dtype")
    _one_line_error(args[:-2] + ["--n-boot", "30"], "the extract suite finished with other options (n_boot 20 -> 30)")


@pytest.mark.slow
def test_options_are_checked_before_any_job(tmp_path):
    out = tmp_path / "never"
    base = ["sweep", "--models", "tiny-neox", "--out", str(out)]
    _one_line_error(base + ["--suites", "extract", "--alpha", "0.5"], "--alpha is an option of the sula, ablation")
    _one_line_error(base + ["--n-boot", "3"], "--n-boot must be >= 10")
    _one_line_error(base + ["--revisions", "log:10"], "built-in model 'tiny-neox' has no revisions")
    _one_line_error(["sweep", "--models", "pythia-41", "--out", str(out)], "unknown model 'pythia-41'")
    _one_line_error(base + ["--executor", "slurm"], "--executor slurm needs --time")
    _one_line_error(base + ["--executor", "cluster"], "unknown executor 'cluster'")
    _one_line_error(base + ["--time", "0"], "--time must be >= 1")
    bad = tmp_path / "bad.toml"
    bad.write_text('models = ["tiny-neox"]\nout = "x"\n[options]\nn_per_quintil = 3\n')
    _one_line_error(["sweep", "--file", str(bad)], "unknown option 'n_per_quintil' (did you mean n_per_quintile")
    assert not out.exists()


FAKE_SBATCH = """#!/bin/sh
cp "$1" "{record}"
echo "Submitted batch job 4242"
"""
FAKE_SQUEUE = """#!/bin/sh
cat "{states}"
"""


@pytest.mark.slow
def test_slurm_array_from_a_file(tmp_path, monkeypatch):
    """--executor slurm submits one array through submitit (a fake sbatch records the script) and
    records the job ids; --status asks squeue (a fake one) while the run directories are empty."""
    import shutil

    if shutil.which("sbatch") is not None:
        pytest.skip("a real Slurm is installed here: this test must not submit to it")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    record, states = tmp_path / "submitted.sh", tmp_path / "queue.txt"
    states.write_text("4242_0 RUNNING\n4242_1 PENDING\n")
    for name, text in (("srun", "#!/bin/sh\nexit 0\n"), ("sbatch", FAKE_SBATCH.format(record=record)),
                       ("squeue", FAKE_SQUEUE.format(states=states))):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    out = tmp_path / "slurm-sweep"
    spec = tmp_path / "sweep.toml"
    spec.write_text(f"""
models = ["tiny-neox", "tiny-llama"]
suites = ["extract", "geometry"]
out = "{out}"
executor = "slurm"
partition = "gpu"
time = 90
gpus_per_job = 1
mem_gb = 32
cpus_per_job = 4
array_parallelism = 2
slurm_account = "proj"
slurm_qos = "high"

[options]
dtype = "bfloat16"
n-per-quintile = 5
init_seeds = 1
""")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    preview = runner.invoke(app, ["sweep", "--file", str(spec), "--dry-run"])
    assert preview.exit_code == 0, preview.output
    assert not out.exists()
    result = runner.invoke(app, ["sweep", "--file", str(spec)])
    assert result.exit_code == 0, result.output
    assert "submitted 2 job(s) as slurm array 4242" in result.output
    script = record.read_text()
    for line in ("#SBATCH --array=0-1%2", "#SBATCH --partition=gpu", "#SBATCH --time=90", "#SBATCH --gpus-per-node=1",
                 "#SBATCH --mem=32GB", "#SBATCH --cpus-per-task=4", "#SBATCH --account=proj", "#SBATCH --qos=high",
                 "#SBATCH --job-name=geomprobe-sweep", f"#SBATCH --output={out / 'logs'}/%A_%a_0_log.out"):
        assert line in script.splitlines(), (line, script)
    assert f"{sys.executable} -u -m submitit.core._submit {out / 'logs'}" in script
    assert script.strip() in preview.output  # --dry-run printed the script that was submitted
    jobs = _jobs(out)
    assert [(j["status"], j["job_id"], j["executor"]) for j in jobs.values()] == [
        ("submitted", "4242_0", "slurm"), ("submitted", "4242_1", "slurm")]
    spec_saved = json.loads((out / "sweep.json").read_text())["spec"]
    assert spec_saved["options"] == {"dtype": "bfloat16", "n_per_quintile": 5, "init_seeds": 1}
    assert spec_saved["suite_options"]["geometry"]["n_per_quintile"] == 5
    assert len(list((out / "logs").glob("4242_*_submitted.pkl"))) == 2  # what each array task runs
    status = runner.invoke(app, ["sweep", "--status", str(out)])
    assert "2 jobs: 0 done, 1 running, 0 failed, 1 pending" in status.output, status.output
    # a rerun leaves jobs that are still queued or running alone
    again = runner.invoke(app, ["sweep", "--file", str(spec)])
    assert again.exit_code == 0 and "2 to run" not in again.output and "running elsewhere" in again.output
    # the second array task ends with run_job's failure in its result file: --status says so
    from submitit.core.utils import cloudpickle_dump

    states.write_text("4242_0 RUNNING\n")
    cloudpickle_dump(("success", {"status": "failed", "error": "model X is not in the cache"}),
                     out / "logs" / "4242_1_0_result.pkl")
    status = runner.invoke(app, ["sweep", "--status", str(out)])
    assert "2 jobs: 0 done, 1 running, 1 failed, 0 pending" in status.output and "model X is not in the cache" in \
        status.output, status.output


@pytest.mark.slow
def test_local_executor_pins_one_job_per_gpu(tmp_path, monkeypatch):
    """With N visible GPUs the local executor runs N jobs at once, each with CUDA_VISIBLE_DEVICES
    set to its own GPU (faked here: on this CPU machine torch sees none and the jobs use the CPU)."""
    import geomprobe.sweep as sweeps

    sweep = sweeps.build_sweep(models="tiny-neox", out=tmp_path / "slots", suites="extract")
    monkeypatch.setattr(sweeps, "_visible_gpus", lambda: ["0", "1", "2", "3"])
    assert [s["visible_gpus"] for s in sweeps._local_slots(sweep)] == [(0,), (1,), (2,), (3,)]
    assert all(s["gpus_per_node"] == 1 and s["timeout_min"] == sweeps.LOCAL_TIMEOUT_MIN for s in sweeps._local_slots(sweep))
    two = sweeps.build_sweep(models="tiny-neox", out=tmp_path / "slots", suites="extract", gpus_per_job=2, time=30)
    assert [(s["visible_gpus"], s["timeout_min"]) for s in sweeps._local_slots(two)] == [((0, 1), 30), ((2, 3), 30)]
    sharded = sweeps.build_sweep(models="tiny-neox", out=tmp_path / "slots", suites="extract",
                                 options={"device_map": "auto"})
    assert [s["visible_gpus"] for s in sweeps._local_slots(sharded)] == [(0, 1, 2, 3)]
    cpu = sweeps.build_sweep(models="tiny-neox", out=tmp_path / "slots", suites="extract", options={"device": "cpu"})
    assert [s["gpus_per_node"] for s in sweeps._local_slots(cpu)] == [0]
    with pytest.raises(ConfigError, match="shows 4 GPU"):
        sweeps._local_slots(sweeps.build_sweep(models="tiny-neox", out=tmp_path / "s", gpus_per_job=5))
    monkeypatch.setattr(sweeps, "_visible_gpus", lambda: ["GPU-aa", "GPU-bb"])
    assert [s["setup"] for s in sweeps._local_slots(sweep)] == [["export CUDA_VISIBLE_DEVICES=GPU-aa"],
                                                                 ["export CUDA_VISIBLE_DEVICES=GPU-bb"]]

    monkeypatch.setattr(sweeps, "_visible_gpus", lambda: ["0", "1"])
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # two jobs at once on 2 cores
    out = tmp_path / "pinned"
    sweep = sweeps.build_sweep(models="tiny-neox,tiny-llama", out=out, suites="extract", options={"n_boot": 20})
    assert sweeps.run_sweep(sweep, quiet=True) == 0
    jobs = list(_jobs(out).values())
    assert [(j["status"], j["gpus"], j["cuda_visible_devices"]) for j in jobs] == [("complete", "0", "0"),
                                                                                 ("complete", "1", "1")]
    assert max(j["started"] for j in jobs) < min(j["ended"] for j in jobs)  # they ran at the same time
