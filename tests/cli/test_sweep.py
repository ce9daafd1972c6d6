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
from geomprobe.sweep import PYTHIA_STEPS, _model_revisions, build_sweep, log_spaced, model_revisions, run_names

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


def _model_dir(path: Path, config: str = '{"model_type": "gpt_neox"}') -> Path:
    """A directory that looks like a saved model to the resolver: config.json and a weights file
    (empty: nothing here loads it)."""
    path.mkdir(parents=True)
    (path / "config.json").write_text(config)
    (path / "model.safetensors").write_bytes(b"")
    return path


@pytest.fixture
def hub_cache(tmp_path, monkeypatch):
    """A Hugging Face cache of our own (the hub cache layout: models--org--name/refs/<revision> ->
    snapshots/<commit>/), empty until `add` puts a model's revision in it; offline (conftest)."""
    from huggingface_hub import constants

    root = tmp_path / "hf" / "hub"
    root.mkdir(parents=True)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(root))
    monkeypatch.setenv("HF_HOME", str(root.parent))

    def add(repo: str, revision: str = "main", weights: bool = True) -> None:
        folder = root / f"models--{repo.replace('/', '--')}"
        commit = f"{len(list(folder.glob('snapshots/*'))) + 1:040x}"
        (folder / "refs").mkdir(parents=True, exist_ok=True)
        (folder / "refs" / revision).write_text(commit)
        _model_dir(folder / "snapshots" / commit)
        if not weights:
            (folder / "snapshots" / commit / "model.safetensors").unlink()

    return add


def test_revision_shorthands():
    ten = model_revisions("pythia-160m", "log:10")
    steps = [int(r.removeprefix("step")) for r in ten]
    assert len(set(ten)) == 10 and steps == sorted(steps) and steps[0] == 0 and steps[-1] == 143000
    assert all(s in PYTHIA_STEPS for s in steps)
    every = model_revisions("pythia-410m", "all")
    assert len(every) == len(PYTHIA_STEPS) == 154 and every[:4] == ["step0", "step1", "step2", "step4"]
    assert every[10:12] == ["step512", "step1000"] and every[-1] == "step143000"
    assert model_revisions("pythia-160m", "main,step1000,step1000") == [None, "step1000"]
    # main IS step143000 on the hub: one run of those weights, by its step
    assert model_revisions("pythia-160m", "main,all") == every
    assert model_revisions("pythia-160m", "step143000,main") == ["step143000"]
    assert model_revisions("EleutherAI/pythia-70m", "main,log:3") == ["step0", "step512", "step143000"]
    assert model_revisions("phi-2", "main,v1") == [None, "v1"]  # no checkpoint known to equal main
    pairs, problems = _model_revisions(["pythia-160m@all", "pythia-160m", "phi-2"], None)
    assert problems == [] and len(pairs) == 155 and pairs[-2:] == [("pythia-160m", "step143000"), ("phi-2", None)]
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

    # the checkpoint at the last step (20) is the final model: `all` runs those weights once
    assert model_revisions(str(windtunnel), "all") == ["step-2", "step-20"]
    assert model_revisions(str(windtunnel), "log:2") == ["step-2", "step-20"]
    assert model_revisions(str(windtunnel), "step2,final") == ["step-2", None]
    assert model_revisions(str(windtunnel), "main,step-20") == ["step-20"]
    assert _model_revisions([f"{windtunnel}@all", str(windtunnel)], None)[0] == [
        (str(windtunnel), "step-2"), (str(windtunnel), "step-20")]
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
    names = ["tiny-llama@main", "wt@step-2", "wt@step-20"]  # a local directory's runs: by its name
    jobs = _jobs(out)
    assert list(jobs) == names
    assert jobs["tiny-llama@main"]["status"] == "failed" and "without a result" in jobs["tiny-llama@main"]["error"]
    assert all(jobs[name]["status"] == "complete" for name in names[1:]), jobs
    assert all(jobs[name]["executor"] == "local" and jobs[name]["job_id"] for name in names)
    assert _manifest(victim)["status"] == "running"  # killed mid-way: the runner never finished it
    assert any(out.joinpath("logs").glob("*_log.err"))
    logs = "".join(path.read_text(errors="replace") for path in out.joinpath("logs").glob("*_log.err"))
    for name in names[1:]:  # each finished job's log carries geomprobe's own first and last lines (tail -f)
        assert f"geomprobe sweep job {name}:" in logs and f"geomprobe sweep job {name}: complete in" in logs, logs[-2000:]

    status = runner.invoke(app, ["sweep", "--status", str(out)])
    assert status.exit_code == 0, status.output
    assert "3 jobs: 2 done, 0 running, 1 failed, 0 pending" in status.output
    assert re.search(r"tiny-llama@main\s+│\s+failed", status.output)

    again = subprocess.run(command, capture_output=True, text=True, timeout=240)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "3 jobs, 2 done, 1 to run" in again.stderr and "tiny-llama@main: complete" in again.stderr  # progress
    assert "3 jobs: 3 done" in again.stdout and "to run" not in again.stdout  # the status table
    jobs = _jobs(out)
    assert jobs["tiny-llama@main"]["status"] == "complete" and jobs["tiny-llama@main"]["attempts"] == 2
    assert jobs["wt@step-20"]["attempts"] == 1  # done: not rerun
    manifest = _manifest(victim)
    assert manifest["status"] == "complete" and {"extract", "geometry"} <= set(manifest["suites"])
    assert "3 jobs: 3 done, 0 running, 0 failed, 0 pending" in runner.invoke(app, ["sweep", "--status", str(out)]).output

    # one run directory per checkpoint, each loaded once for both suites; the last one is the final model's weights
    runs = {name: _manifest(out / "runs" / name) for name in names[1:]}
    assert [m["config"]["revision"] for m in runs.values()] == ["step-2", "step-20"]
    assert runs["wt@step-2"]["config"]["model_identity"]["checkpoint"] == "checkpoints/step-0000002.pt"
    assert runs["wt@step-2"]["config"]["model"] == str(windtunnel.resolve())  # loaded from its path


@pytest.mark.slow
def test_failing_job_is_recorded_and_done_jobs_skipped(tmp_path):
    """Inline: a model directory that passes the pre-check (config.json and a weights file) but
    does not load fails with its one-line error, the other job completes, the sweep exits 1; a rerun
    skips the done job. `--status --json` says the same as the table."""
    broken = _model_dir(tmp_path / "broken", config="{}")  # no model_type: transformers cannot read it
    out = tmp_path / "inline"
    args = ["sweep", "--models", f"{broken},tiny-neox", "--suites", "extract", "--n-boot", "20",
            "--out", str(out), "--executor", "inline"]
    first = runner.invoke(app, args)
    assert first.exit_code == 1, first.output
    jobs = _jobs(out)
    failed = jobs["broken@main"]
    assert failed["status"] == "failed" and "cannot be read as a model configuration" in failed["error"]
    assert "\n" not in failed["error"] and jobs["tiny-neox@main"]["status"] == "complete"
    assert _manifest(out / "runs" / "tiny-neox@main")["status"] == "complete"
    assert "2 jobs: 1 done, 0 running, 1 failed, 0 pending" in first.output
    status = runner.invoke(app, ["sweep", "--status", str(out), "--json"])
    assert status.exit_code == 0, status.output
    data = json.loads(status.stdout)
    assert data["totals"] == {"done": 1, "running": 0, "failed": 1, "pending": 0, "damaged": 0}
    assert [(r["name"], r["state"]) for r in data["jobs"]] == [("broken@main", "failed"), ("tiny-neox@main", "done")]
    assert "cannot be read as a model configuration" in data["jobs"][0]["detail"] and data["driver"] is None
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


def test_every_model_and_revision_is_checked_before_anything_starts(tmp_path, hub_cache):
    """Offline, against a Hugging Face cache of our own: a hub model (or one of its revisions) that
    is not cached, or cached without weights, is refused with the loader's one line, every problem at
    once, at once (no job, no sweep directory, nothing submitted); the cached ones pass."""
    from geomprobe.commandline import option_specs

    hub_cache("acme/cached")
    hub_cache("acme/cached", "v2", weights=False)  # config.json only: its job could not load it
    hub_cache("EleutherAI/pythia-160m", "step0")
    option_specs()  # the suite registry imported: what the timing measures is the check
    out = tmp_path / "never"
    started = time.perf_counter()
    result = runner.invoke(app, ["sweep", "--models", "acme/cached,acme/uncached,pythia-41,acme/cached@v2",
                                 "--out", str(out), "--executor", "slurm", "--time", "10"])
    seconds = time.perf_counter() - started
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert lines[0] == "error: 3 problems with the sweep's models; nothing was started:" and len(lines) == 4, lines
    assert lines[1].startswith("  unknown model 'pythia-41'")  # the entries that do not resolve first
    assert lines[2].startswith("  model acme/cached@v2 is not in the local Hugging Face cache")  # by model
    assert lines[3].startswith("  model acme/uncached is not in the local Hugging Face cache") and \
        "hf download acme/uncached`" in lines[3] and f"HF_HOME={tmp_path / 'hf'}" in lines[3]
    assert seconds < 5 and not out.exists()
    # one line per model, its missing revisions named: Pythia's 154 checkpoints, one cached
    with pytest.raises(ConfigError) as refused:
        build_sweep(models="pythia-160m", revisions="all", out=out)
    assert str(refused.value).startswith("model EleutherAI/pythia-160m@step1 is not in the local Hugging Face cache")
    assert str(refused.value).endswith("(and 152 more revision(s) of it: step2, step4, step8, ..., step142000, "
                                       "step143000)") and "\n" not in str(refused.value)
    _one_line_error(["sweep", "--models", "pythia-160m", "--revisions", "step0,step1000", "--out", str(out),
                     "--dry-run"], "model EleutherAI/pythia-160m@step1000 is not in the local Hugging Face cache")
    # what is cached passes: the alias's revision, the hub id at main
    assert [j["name"] for j in build_sweep(models="pythia-160m@step0,acme/cached", out=out).jobs] == [
        "pythia-160m@step0", "acme_cached@main"]
    assert not out.exists()


def test_local_directories_name_their_runs(tmp_path):
    """A local model directory's runs are named by its last path component, with parent components
    where two would collide (with each other or with an alias); the job loads it by its path."""
    a, b = _model_dir(tmp_path / "a" / "model"), _model_dir(tmp_path / "b" / "model")
    own, alias_named = _model_dir(tmp_path / "c" / "mine"), _model_dir(tmp_path / "d" / "tiny-neox")
    sweep = build_sweep(models=f"{a},{b},{own},tiny-neox,{alias_named}", out=tmp_path / "s")
    assert [(j["name"], j["model"]) for j in sweep.jobs] == [
        ("a_model@main", str(a)), ("b_model@main", str(b)), ("mine@main", str(own)), ("tiny-neox@main", "tiny-neox"),
        ("d_tiny-neox@main", str(alias_named))]
    assert all(j["run_dir"] == f"runs/{j['name']}" for j in sweep.jobs)
    # the same directory twice (by two paths) is one job; paths whose names differ only in what a
    # run name cannot hold are numbered
    again = build_sweep(models=f"{own},{tmp_path}/c/../c/mine", out=tmp_path / "s")
    assert [j["name"] for j in again.jobs] == ["mine@main"]
    odd, even = _model_dir(tmp_path / "x y" / "m"), _model_dir(tmp_path / "x_y" / "m")
    names = run_names([str(odd), str(even)])
    assert names[str(even)] == names[str(odd)] + "-2" and names[str(odd)].endswith("x_y_m")


def test_status_as_json(tmp_path):
    """`--status DIR --json`: the totals and per-job rows the table shows, as JSON on stdout."""
    from geomprobe.sweep import Record

    out = tmp_path / "s"
    sweep = build_sweep(models="tiny-neox,tiny-llama", out=out)
    Record(out, sweep.spec, sweep.jobs).save()  # what the driver writes before its jobs start
    result = runner.invoke(app, ["sweep", "--status", str(out), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["sweep"] == str(out) and data["suites"] == "extract" and data["driver"] is None
    assert data["totals"] == {"done": 0, "running": 0, "failed": 0, "pending": 2, "damaged": 0}
    assert [(r["name"], r["model"], r["state"], r["suites_done"], r["suites"], r["run_dir"]) for r in data["jobs"]] == [
        ("tiny-neox@main", "tiny-neox", "pending", 0, 1, "runs/tiny-neox@main"),
        ("tiny-llama@main", "tiny-llama", "pending", 0, 1, "runs/tiny-llama@main")]
    table = runner.invoke(app, ["sweep", "--status", str(out)])
    assert "2 jobs: 0 done, 0 running, 0 failed, 2 pending" in table.output and "{" not in table.output
    _one_line_error(["sweep", "--models", "tiny-neox", "--out", str(out), "--json"], "--json goes with --status DIR")
    _one_line_error(["sweep", "--status", str(out), "--json", "--quiet"], "--status DIR takes no other option but --json")


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
    import geomprobe.sweep as sweeps

    states.write_text("4242_0 RUNNING\n")
    second = next(j for j in jobs.values() if j["job_id"] == "4242_1")
    path = sweeps.result_path(out, second["token"])
    path.write_text(json.dumps({"status": "failed", "error": "model X is not in the cache", "seconds": 3}))
    status = runner.invoke(app, ["sweep", "--status", str(out)])
    assert "2 jobs: 0 done, 1 running, 1 failed, 0 pending" in status.output and "model X is not in the cache" in \
        status.output, status.output
    # a crafted pickle where submitit keeps its results is never loaded: reading a sweep runs nothing
    import pickle

    class Hostile:
        def __reduce__(self):
            return (os.system, (f"touch {tmp_path / 'pwned'}",))

    path.unlink()
    for name in ("4242_1_0_result.pkl", "4242_0_0_result.pkl"):
        (out / "logs" / name).write_bytes(pickle.dumps(("success", Hostile())))
    status = runner.invoke(app, ["sweep", "--status", str(out)])
    assert status.exit_code == 0 and not (tmp_path / "pwned").exists(), status.output
    assert "1 running, 1 failed, 0 pending" in status.output and "left no result" in status.output, status.output


@pytest.mark.slow
def test_local_executor_pins_one_job_per_gpu(tmp_path, monkeypatch):
    """With N visible GPUs the local executor runs N jobs at once, each with CUDA_VISIBLE_DEVICES
    set to its own GPU (faked here: on this CPU machine torch sees none and the jobs use the CPU)."""
    import geomprobe.sweep as sweeps

    sweep = sweeps.build_sweep(models="tiny-neox", out=tmp_path / "slots", suites="extract")
    monkeypatch.setattr("geomprobe.sweep.driver._visible_gpus", lambda: ["0", "1", "2", "3"])
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
    monkeypatch.setattr("geomprobe.sweep.driver._visible_gpus", lambda: ["GPU-aa", "GPU-bb"])
    assert [s["setup"] for s in sweeps._local_slots(sweep)] == [["export CUDA_VISIBLE_DEVICES=GPU-aa"],
                                                                 ["export CUDA_VISIBLE_DEVICES=GPU-bb"]]

    monkeypatch.setattr("geomprobe.sweep.driver._visible_gpus", lambda: ["0", "1"])
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # two jobs at once on 2 cores
    out = tmp_path / "pinned"
    sweep = sweeps.build_sweep(models="tiny-neox,tiny-llama", out=out, suites="extract", options={"n_boot": 20})
    assert sweeps.run_sweep(sweep, quiet=True) == 0
    jobs = list(_jobs(out).values())
    assert [(j["status"], j["gpus"], j["cuda_visible_devices"]) for j in jobs] == [("complete", "0", "0"),
                                                                                 ("complete", "1", "1")]
    assert max(j["started"] for j in jobs) < min(j["ended"] for j in jobs)  # they ran at the same time
