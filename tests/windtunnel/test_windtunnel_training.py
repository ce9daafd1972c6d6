"""Wind-tunnel architectures, scoring and training: what a few seconds of training can show."""

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from geomprobe.analysis.windtunnel_metrics import entropy_bits, score_against_bayes
from geomprobe.errors import ConfigError, RunDirectoryError
from geomprobe.windtunnel.models import TransformerSpec, build, n_params
from geomprobe.windtunnel.tasks import make_task
from geomprobe.windtunnel.train import TrainConfig, evaluate, train


def test_scores_of_known_predictors():
    task = make_task("bijection", n=10)
    batch = task.sample(64, np.random.default_rng(0))
    perfect = score_against_bayes(batch.bayes, batch.bayes, batch.supervised)
    assert perfect.entropy_mae_bits == pytest.approx(0, abs=1e-12) and perfect.kl_bits == pytest.approx(0, abs=1e-9)
    assert perfect.mass_on_feasible == pytest.approx(1)
    # context-blind: uniform over all values; MAE = mean over t of log2(n) - log2(n - t)
    uniform = np.where(batch.supervised[..., None], 1.0 / 10, 0.0) * np.ones_like(batch.bayes)
    blind = score_against_bayes(uniform, batch.bayes, batch.supervised)
    expected = np.mean([np.log2(10) - np.log2(10 - t) for t in range(10)])
    assert blind.entropy_mae_bits == pytest.approx(expected, rel=1e-9)
    assert blind.kl_bits == pytest.approx(expected, rel=1e-9)  # KL(uniform-on-S || uniform) = log2(n/|S|)
    # the last key's Bayes is one-hot; a blind model gets it right 1 time in 10 at most by argmax ties
    assert blind.accuracy_determined is not None
    # half the mass on impossible tokens shows up in the mass, not in the renormalised entropy
    leaky = score_against_bayes(batch.bayes * 0.5, batch.bayes, batch.supervised)
    assert leaky.entropy_mae_bits == pytest.approx(0, abs=1e-12) and leaky.mass_on_answers == pytest.approx(0.5)


def test_entropy_bits_matches_scipy():
    from scipy.stats import entropy

    p = np.random.default_rng(1).dirichlet(np.ones(7), size=5)
    np.testing.assert_allclose(entropy_bits(p), entropy(p, base=2, axis=-1))


@pytest.mark.slow
@pytest.mark.parametrize("arch", ["transformer", "lstm", "mlp", "mamba"])
def test_architectures_are_causal_and_matched_in_size(arch):
    module, info = build(arch, vocab_size=43, max_len=41)
    assert abs(info["n_params"] - info["matched_to_params"]) / info["matched_to_params"] < 0.05
    assert info["n_params"] == n_params(module)
    tokens = torch.randint(0, 43, (2, 41))
    changed = tokens.clone()
    changed[:, 30:] = (changed[:, 30:] + 1) % 43
    module.eval()
    with torch.no_grad():
        a, b = module(tokens), module(changed)
    assert a.shape == (2, 41, 43)
    torch.testing.assert_close(a[:, :30], b[:, :30], atol=1e-5, rtol=1e-5)
    assert not torch.allclose(a[:, 30:], b[:, 30:])


@pytest.mark.slow
def test_short_training_beats_the_uniform_baseline_and_saves_an_hf_model(tmp_path, monkeypatch):
    config = TrainConfig(task="sula", steps=60, batch_size=64, eval_sequences=256, n_checkpoints=3, log_every=5)
    metrics = train(config, tmp_path / "wt", progress=False)
    history = metrics["history"]
    uniform_loss = np.log(8)  # the 8 label tokens; a fresh model is near log(vocab) = log(63)
    assert history[0]["loss"] > uniform_loss
    assert np.mean([h["loss"] for h in history[-3:]]) < uniform_loss
    score = metrics["eval"]["train_length"]
    assert score["mass_on_answers"] > 0.5  # from about 8/63 at initialisation
    assert len(list((tmp_path / "wt" / "checkpoints").glob("step-*.pt"))) >= 3
    saved = json.loads((tmp_path / "wt" / "metrics.json").read_text())
    assert saved["steps"] == 60

    # it loads like any model and the extraction engine runs on it with task prompts
    from geomprobe.extraction import extract
    from geomprobe.models import load_model
    from geomprobe.windtunnel.prompts import task_prompts

    loaded = load_model(str(tmp_path / "wt"))
    task = make_task("sula")
    prompts = task_prompts(task, n=16)
    ids = loaded.tokenizer(prompts[0].text)["input_ids"]
    assert loaded.tokenizer.unk_token_id not in ids and ids[0] == task.bos_id
    ex = extract(loaded, prompts, progress=False)
    assert ex["values"].shape == (16, 4, 4, 32)

    # evaluating the reloaded HF model reproduces the saved evaluation
    from geomprobe.windtunnel.models import HFLogits

    again = evaluate(HFLogits(loaded.model), task, n_sequences=256, seed=12345)
    assert again["entropy_mae_bits"] == pytest.approx(score["entropy_mae_bits"], abs=1e-4)


@pytest.mark.slow
def test_windtunnel_alias_trains_on_first_use(monkeypatch, tmp_path):
    from geomprobe.runner import RunConfig, run

    monkeypatch.setenv("GEOMPROBE_WINDTUNNEL_STEPS", "20")
    out = run(RunConfig(model="windtunnel-sula", out=str(tmp_path / "run")), progress=False)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["suites"]["extract"]["prompts"]["source"].startswith("windtunnel:sula")
    assert manifest["suites"]["extract"]["prompts"]["n"] == 200
    assert np.load(out / "extraction" / "values.npy").shape[:2] == (200, 3)


def test_pca_ratios_match_sklearn():
    from sklearn.decomposition import PCA
    from sklearn.preprocessing import StandardScaler

    from geomprobe.analysis.pca import explained_variance_ratios

    rng = np.random.default_rng(0)
    data = rng.normal(size=(50, 6)) @ rng.normal(size=(6, 6)) + rng.normal(size=6)
    data = np.column_stack([data, np.full(50, 3.0)])  # a constant column is dropped
    expected = PCA().fit(StandardScaler().fit_transform(data[:, :6])).explained_variance_ratio_
    np.testing.assert_allclose(explained_variance_ratios(data), expected, atol=1e-10)


@pytest.mark.slow
def test_frame_precision_curves_on_a_short_run(tmp_path):
    from geomprobe.windtunnel.dissociation import dissociation_curves

    config = TrainConfig(task="sula", steps=30, batch_size=32, eval_sequences=64, n_checkpoints=2,
                         spec=TransformerSpec(32, 2, 2, 64))
    train(config, tmp_path / "wt", progress=False)
    curves = dissociation_curves(tmp_path / "wt", n_probe=16, n_eval=64)
    assert len(curves) == 3 and curves[-1]["step"] == 30
    assert curves[-1]["attention_distance_mean"] == 0.0  # the final checkpoint against itself
    assert all(0 < c["attention_distance_mean"] <= 1 for c in curves[:-1])
    assert all(0 < c["pc1"] <= c["pc12"] <= 1 for c in curves)


@pytest.mark.slow
def test_training_into_a_log_file_prints_a_line_every_tenth(tmp_path, capfd):
    """Not a terminal (pytest's captured stderr, like `> log` or a SLURM job): plain lines as it goes."""
    import re

    config = TrainConfig(task="sula", steps=30, batch_size=16, eval_sequences=32, spec=TransformerSpec(16, 1, 2, 32))
    train(config, tmp_path / "wt", progress=True, until=15)  # half the budget, then the rest resumed
    first = capfd.readouterr().err
    train(config, tmp_path / "wt", progress=True, resume=True)
    second = capfd.readouterr().err
    line = re.compile(r"^train transformer on sula: (\d+)% \(step (\d+)\), loss [\d.]+, entropy MAE [\d.]+ bits, \d+ s$",
                      re.M)
    assert [int(m[0]) for m in line.findall(first)] == [10, 20, 30, 40, 50]
    assert [int(m[0]) for m in line.findall(second)] == [60, 70, 80, 90, 100]
    assert [int(m[1]) for m in line.findall(second)] == [18, 21, 24, 27, 30]


@pytest.mark.slow
def test_windtunnel_cli_train_and_curves(tmp_path):
    from typer.testing import CliRunner

    from geomprobe.cli import app

    runner = CliRunner()
    out = tmp_path / "cli-run"
    result = runner.invoke(app, ["windtunnel", "train", "--task", "recall", "--steps", "15", "--d-model", "32",
                                 "--n-layers", "2", "--n-heads", "2", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "accuracy" in result.output and (out / "config.json").exists()
    result = runner.invoke(app, ["windtunnel", "curves", str(out), "--n-probe", "8"])
    assert result.exit_code == 0, result.output
    assert len(json.loads((out / "curves.json").read_text())) >= 2
    bad = runner.invoke(app, ["windtunnel", "curves", str(tmp_path)])
    assert bad.exit_code == 2 and "has no metrics.json" in bad.stderr
    bad = runner.invoke(app, ["windtunnel", "train", "--task", "nope", "--steps", "1", "--out", str(tmp_path / "x")])
    assert bad.exit_code == 2 and "nope" in bad.stderr


# --- training you can trust: one trainer per directory, refusal, --overwrite, --resume ---------------------------

TINY = dict(task="sula", batch_size=16, eval_sequences=32, n_checkpoints=4, log_every=2,
            spec=TransformerSpec(16, 1, 2, 32))


def _weights(run_dir):
    from safetensors.torch import load_file

    return load_file(str(run_dir / "model.safetensors"))


def _assert_same_run(a, b):
    """Same final weights (bit for bit), same checkpoints, same loss history."""
    wa, wb = _weights(a), _weights(b)
    assert wa.keys() == wb.keys()
    for name in wa:
        assert torch.equal(wa[name], wb[name]), name
    ca = sorted(p.name for p in (a / "checkpoints").glob("step-*.pt"))
    assert ca == sorted(p.name for p in (b / "checkpoints").glob("step-*.pt"))
    for name in ca:
        sa = torch.load(a / "checkpoints" / name, weights_only=True)["state_dict"]
        sb = torch.load(b / "checkpoints" / name, weights_only=True)["state_dict"]
        assert all(torch.equal(sa[k], sb[k]) for k in sa), name
    ma, mb = (json.loads((d / "metrics.json").read_text()) for d in (a, b))
    strip = [{k: v for k, v in h.items() if k != "elapsed_s"} for h in ma["history"]]
    assert strip == [{k: v for k, v in h.items() if k != "elapsed_s"} for h in mb["history"]]
    assert ma["eval"] == mb["eval"] and ma["steps"] == mb["steps"]


@pytest.fixture
def keep_threads():
    threads = torch.get_num_threads()
    yield
    torch.set_num_threads(threads)


def _interrupt_at(monkeypatch, step, how="raise"):
    """Make training hit Ctrl-C when drawing the batch of step `step` + 1: raised there, or as a real
    SIGINT (which the training loop defers to the next step boundary)."""
    import signal

    import geomprobe.windtunnel.train as train_module

    real = train_module._tensors
    calls = {"n": 0}

    def tensors(batch, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] == step + 1:
            if how == "raise":
                raise KeyboardInterrupt
            signal.raise_signal(signal.SIGINT)
        return real(batch, *args, **kwargs)

    monkeypatch.setattr(train_module, "_tensors", tensors)
    return lambda: monkeypatch.setattr(train_module, "_tensors", real)


@pytest.mark.slow
def test_existing_run_is_refused_and_overwrite_keeps_other_files(tmp_path):
    from typer.testing import CliRunner

    from geomprobe.cli import app

    out = tmp_path / "wt"
    train(TrainConfig(steps=3, **TINY), out, progress=False)
    (out / "notes.txt").write_text("mine")
    stale = out / "checkpoints" / "step-0000200.pt"  # what an older geomprobe left mixed in
    stale.write_bytes(b"old")
    runner = CliRunner()
    args = ["windtunnel", "train", "--task", "sula", "--steps", "2", "--d-model", "16", "--n-layers", "1",
            "--n-heads", "2", "--batch-size", "8", "--out", str(out)]
    refused = runner.invoke(app, args)
    assert refused.exit_code == 2, refused.output
    lines = [line for line in refused.stderr.splitlines() if line.strip()]
    assert lines == [f"error: {out} already holds a wind-tunnel training run (metrics.json / checkpoints): pass "
                     "--resume to continue it from its last checkpoint, or --overwrite to start afresh, or choose "
                     "another --out"]
    assert stale.exists()
    result = runner.invoke(app, [*args, "--overwrite"])
    assert result.exit_code == 0, result.output
    assert (out / "notes.txt").read_text() == "mine" and not stale.exists()
    assert json.loads((out / "metrics.json").read_text())["steps"] == 2
    assert max(int(p.stem.split("-")[1]) for p in (out / "checkpoints").glob("step-*.pt")) == 2
    # a directory of other files only is not trained into without --overwrite
    other = tmp_path / "other"
    other.mkdir()
    (other / "data.csv").write_text("1,2\n")
    with pytest.raises(RunDirectoryError, match=r"is not empty \(data.csv\)"):
        train(TrainConfig(steps=2, **TINY), other, progress=False)
    with pytest.raises(ConfigError, match="not both"):
        train(TrainConfig(steps=2, **TINY), other, progress=False, resume=True, overwrite=True)


@pytest.mark.slow
@pytest.mark.parametrize("how", ["raise", "sigint"])
def test_resume_after_ctrl_c_matches_an_uninterrupted_run(tmp_path, monkeypatch, how):
    from geomprobe.windtunnel.train import load_state

    config = TrainConfig(steps=12, **TINY)
    train(config, tmp_path / "straight", progress=False)
    out = tmp_path / "resumed"
    restore = _interrupt_at(monkeypatch, 5, how)
    with pytest.raises(KeyboardInterrupt, match="rerun with --resume to continue") as stopped:
        train(TrainConfig(steps=12, **TINY), out, progress=False)
    restore()
    at = 5 if how == "raise" else 6  # a real SIGINT finishes the step it arrived in
    assert f"stopped at step {at}, its state saved" in str(stopped.value)
    state = load_state(out)
    assert state["step"] == at and not state["done"]
    assert not (out / "metrics.json").exists()
    with pytest.raises(RunDirectoryError, match="already holds a wind-tunnel training run"):
        train(TrainConfig(steps=12, **TINY), out, progress=False)
    with pytest.raises(RunDirectoryError, match=r"differs in: lr 0.002 -> 0.001; steps 12 -> 13\)"):
        train(TrainConfig(steps=13, **{**TINY, "lr": 1e-3}), out, progress=False, resume=True)
    with pytest.raises(RunDirectoryError, match=r"spec.d_model 16 -> 32"):
        train(TrainConfig(steps=12, **{**TINY, "spec": TransformerSpec(32, 1, 2, 32)}), out, progress=False,
              resume=True)
    metrics = train(TrainConfig(steps=12, **TINY), out, progress=False, resume=True)
    assert metrics["steps"] == 12 and [r["step"] for r in metrics["resumed"]] == [at]
    _assert_same_run(tmp_path / "straight", out)
    # resuming a finished run returns it unchanged
    again = train(TrainConfig(steps=12, **TINY), out, progress=False, resume=True)
    assert again["finished"] == metrics["finished"]


_KILLED_TRAINER = """
import sys, time
import geomprobe.windtunnel.train as t
from geomprobe.windtunnel.models import TransformerSpec
real = t._tensors
def slow(batch):
    time.sleep(0.05)
    return real(batch)
t._tensors = slow
t.train(t.TrainConfig(task="sula", steps=40, batch_size=16, eval_sequences=32, n_checkpoints=4, log_every=2,
                      threads=1, spec=TransformerSpec(16, 1, 2, 32)), sys.argv[1], progress=False)
"""


@pytest.mark.slow
def test_training_killed_with_sigkill_resumes_from_its_last_saved_state(tmp_path, keep_threads):
    import subprocess
    import sys
    import time

    from geomprobe.windtunnel.train import load_state

    config = dict(TINY, steps=40, threads=1)
    out = tmp_path / "killed"
    # checkpoints at 1%, 3.2%, 10%, 32% of 40 steps: the last one is step 14, and the state is saved with it
    proc = subprocess.Popen([sys.executable, "-c", _KILLED_TRAINER, str(out)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        deadline = time.time() + 120
        while (load_state(out) or {}).get("step", 0) < 14:  # atomic writes: never half a file to read
            assert proc.poll() is None, proc.communicate()[1].decode()[-2000:]
            assert time.time() < deadline
            time.sleep(0.05)
        proc.kill()  # SIGKILL: no handler runs; the steps after 14 are lost
    finally:
        proc.kill()
        proc.wait()
    state = load_state(out)
    assert state["step"] == 14 and not state["done"]
    assert not (out / "metrics.json").exists()
    temps = [out / "checkpoints" / ".state.pt.k1ll3d", out / ".metrics.json.k1ll3d"]  # half-written, at the kill
    for temp in temps:
        temp.write_bytes(b"partial")
    metrics = train(TrainConfig(**config), out, progress=False, resume=True)
    assert [r["step"] for r in metrics["resumed"]] == [14]
    assert not any(temp.exists() for temp in temps)
    train(TrainConfig(**config), tmp_path / "straight", progress=False)
    _assert_same_run(tmp_path / "straight", out)


def test_a_second_trainer_into_the_same_directory_is_refused(tmp_path):
    import subprocess
    import sys

    from typer.testing import CliRunner

    from geomprobe.cli import app

    out = tmp_path / "busy"
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time\nfrom geomprobe.locks import DirectoryLock\n"
                               "DirectoryLock(sys.argv[1]).acquire()\nprint('locked', flush=True)\ntime.sleep(60)",
                               str(out)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        result = CliRunner().invoke(app, ["windtunnel", "train", "--steps", "2", "--d-model", "16", "--n-layers", "1",
                                          "--n-heads", "2", "--out", str(out)])
    finally:
        holder.kill()
        holder.wait()
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and f"{out} is in use by another geomprobe process (pid {holder.pid}" in lines[0], lines
    assert not (out / "checkpoints").exists()


@pytest.mark.parametrize("args, expected", [
    (["--d-model", "100", "--n-heads", "3"], "--d-model (100) must be divisible by --n-heads (3)"),
    (["--steps", "0"], "--steps must be a positive integer, got 0"),
    (["--minutes", "0"], "--minutes must be a positive number"),
    (["--minutes", "-1"], "--minutes must be a positive number"),
    (["--steps", "5", "--minutes", "1"], "not both"),
    (["--lr", "0"], "--lr must be a positive number"),
    (["--lr", "nan"], "--lr must be a positive number"),
    (["--batch-size", "0"], "--batch-size must be an integer >= 1, got 0"),
    (["--seed", "-1"], "--seed must be an integer >= 0"),
    (["--threads", "0"], "--threads must be a positive integer"),
    (["--n-layers", "0"], "--n-layers must be a positive integer"),
    (["--d-model", "0"], "--d-model must be a positive integer"),
    (["--task", "nope"], "unknown wind-tunnel task 'nope'"),
    (["--arch", "rnn"], "unknown architecture 'rnn'"),
    (["--target", "exact"], "unknown training target 'exact'"),
    (["--task", "bijection", "--n", "1"], "bijection: n must be at least 2"),
    (["--resume", "--overwrite"], "not both"),
])
def test_bad_training_options_give_one_line(tmp_path, args, expected):
    from typer.testing import CliRunner

    from geomprobe.cli import app

    out = tmp_path / "never"
    result = CliRunner().invoke(app, ["windtunnel", "train", *args, "--out", str(out)])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and expected in lines[0], lines
    assert "Traceback" not in result.output
    assert not out.exists()  # refused before anything is written


# --- built-in wind tunnels: first-use training under a lock, staging, modes ---------------------------------------

@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GEOMPROBE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("GEOMPROBE_WINDTUNNEL_STEPS", "1")
    return tmp_path / "cache" / "windtunnels"


@pytest.mark.slow
def test_builtin_training_cleans_stale_staging_and_is_readable_by_others(fresh_cache):
    import os
    import stat

    from geomprobe.windtunnel.builtin import ensure_windtunnel, windtunnel_dir

    fresh_cache.mkdir(parents=True)
    stale = fresh_cache / ".sula-k1ll3d"  # a staging directory left by a killed process
    (stale / "checkpoints").mkdir(parents=True)
    (stale / "checkpoints" / "step-0000001.pt").write_bytes(b"x" * 100)
    other = fresh_cache / ".bijection-abc123"  # another task's: its own lock covers it
    other.mkdir()
    previous = os.umask(0o022)
    try:
        path = ensure_windtunnel("sula", progress=False)
    finally:
        os.umask(previous)
    assert path == windtunnel_dir("sula") and (path / "metrics.json").exists()
    assert not stale.exists() and other.exists()
    assert not list(fresh_cache.glob(".sula-*"))
    assert stat.S_IMODE(path.stat().st_mode) == 0o755
    assert stat.S_IMODE((path / "checkpoints").stat().st_mode) == 0o755
    for name in ("metrics.json", "model.safetensors", "config.json", "checkpoints/state.pt"):
        assert stat.S_IMODE((path / name).stat().st_mode) == 0o644, name
    assert not (path / ".geomprobe.lock").exists()


def test_share_modes_honours_the_umask(tmp_path):
    import os
    import stat
    import tempfile

    from geomprobe.windtunnel.train import share_modes

    previous = os.umask(0o027)
    try:
        made = Path(tempfile.mkdtemp(dir=tmp_path))  # 0700
        (made / "sub").mkdir(mode=0o700)
        fd, name = tempfile.mkstemp(dir=made / "sub")  # 0600
        os.close(fd)
        share_modes(made)
    finally:
        os.umask(previous)
    assert stat.S_IMODE(made.stat().st_mode) == 0o750
    assert stat.S_IMODE((made / "sub").stat().st_mode) == 0o750
    assert stat.S_IMODE(Path(name).stat().st_mode) == 0o640


def test_builtin_training_interrupted_leaves_no_staging(fresh_cache, monkeypatch):
    from geomprobe.windtunnel.builtin import ensure_windtunnel, windtunnel_dir

    _interrupt_at(monkeypatch, 0)
    with pytest.raises(KeyboardInterrupt, match="windtunnel-sula training stopped; it is trained again from scratch on next use"):
        ensure_windtunnel("sula", progress=False)
    assert not list(fresh_cache.glob(".sula-*")) and not windtunnel_dir("sula").exists()


_LOCK_HOLDER = """
import json, sys, time
from geomprobe.windtunnel.builtin import training_lock, windtunnel_dir
lock = training_lock("sula")
lock.acquire()
print("locked", flush=True)
time.sleep(1.5)
path = windtunnel_dir("sula")  # what a finished first-use training leaves
path.mkdir(parents=True)
(path / "config.json").write_text("{}")
(path / "metrics.json").write_text(json.dumps({"by": "the other process"}))
lock.release()
"""


@pytest.mark.slow
def test_a_second_process_waits_for_the_first_use_training(fresh_cache, capsys):
    import os
    import subprocess
    import sys

    from geomprobe.console import cli_logging
    from geomprobe.windtunnel.builtin import ensure_windtunnel

    holder = subprocess.Popen([sys.executable, "-c", _LOCK_HOLDER], stdout=subprocess.PIPE, text=True,
                              env=dict(os.environ))
    try:
        assert holder.stdout.readline().strip() == "locked"
        with cli_logging():  # the notice is a log record: the command line's handler prints it
            path = ensure_windtunnel("sula", progress=False)
    finally:
        holder.kill()
        holder.wait()
    assert json.loads((path / "metrics.json").read_text()) == {"by": "the other process"}  # not trained twice
    err = capsys.readouterr().err
    assert f"waiting for another geomprobe process training windtunnel-sula (pid {holder.pid}" in err
    assert "training it now" not in err


@pytest.mark.slow
def test_ctrl_c_on_the_command_line_saves_the_state_and_says_how_to_resume(tmp_path):
    import signal
    import subprocess
    import sys
    import time

    from geomprobe.windtunnel.train import load_state

    out = tmp_path / "cli-int"
    geomprobe = Path(sys.executable).parent / "geomprobe"
    proc = subprocess.Popen([str(geomprobe), "windtunnel", "train", "--steps", "5000", "--d-model", "16",
                             "--n-layers", "1", "--n-heads", "2", "--batch-size", "8", "--threads", "1",
                             "--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 120
        while not list((out / "checkpoints").glob("step-*.pt")):
            assert proc.poll() is None and time.time() < deadline, proc.communicate()
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 130, err
    step = load_state(out)["step"]
    # the first checkpoint (1% of 5000 steps) came before the SIGINT
    assert step >= 50 and f"training stopped at step {step}, its state saved: rerun with --resume to " \
        "continue" in err, err
    assert "Traceback" not in err


@pytest.mark.slow
def test_resume_from_an_interruption_before_the_first_step(tmp_path, monkeypatch):
    restore = _interrupt_at(monkeypatch, 0)
    with pytest.raises(KeyboardInterrupt, match="stopped at step 0"):
        train(TrainConfig(steps=4, **TINY), tmp_path / "a", progress=False)
    restore()
    train(TrainConfig(steps=4, **TINY), tmp_path / "a", progress=False, resume=True)
    train(TrainConfig(steps=4, **TINY), tmp_path / "b", progress=False)
    _assert_same_run(tmp_path / "a", tmp_path / "b")


def test_a_training_leaves_the_thread_count_as_it_found_it(tmp_path, keep_threads):
    """--threads applies to the training only: a notebook (or the next test) goes on with its own count."""
    torch.set_num_threads(2)
    train(TrainConfig(**dict(TINY, steps=2, threads=1)), tmp_path / "wt", progress=False)
    assert torch.get_num_threads() == 2
