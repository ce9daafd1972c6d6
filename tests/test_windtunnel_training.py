"""Wind-tunnel architectures, scoring and training: what a few seconds of training can show."""

import json

import numpy as np
import pytest
import torch

from geomprobe.analysis.windtunnel_metrics import entropy_bits, score_against_bayes
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
