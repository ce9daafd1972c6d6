"""The reference wind tunnels geomprobe ships (geomprobe.windtunnel.reference): the same bytes on
every machine, checked on load, reproduced by their recipe, and scored against Bayes."""

import json
import shutil
import time

import pytest

from geomprobe.errors import ModelNotFoundError
from geomprobe.windtunnel import reference
from geomprobe.windtunnel.reference import SHIPPED, file_sha256, shipped_dir, weights_sha256

SHIPPED_TASKS = sorted(SHIPPED)


@pytest.fixture
def real_recipes(monkeypatch):
    """The recipes' real budgets (conftest shortens them for first-use training tests)."""
    monkeypatch.delenv("GEOMPROBE_WINDTUNNEL_STEPS", raising=False)


def test_the_package_ships_the_demo_tunnel_and_stays_small():
    assert "sula" in SHIPPED  # make demo's model: trains nothing on a fresh clone
    total = sum((shipped_dir(task) / name).stat().st_size for task in SHIPPED for name in SHIPPED[task].files)
    assert total < 40e6, f"the shipped wind tunnels take {total / 1e6:.1f} MB"


@pytest.mark.parametrize("task", SHIPPED_TASKS)
def test_every_shipped_file_matches_its_sha256_and_its_recipe(task, real_recipes):
    from geomprobe.windtunnel.builtin import recipe_key, windtunnel_dir

    entry = SHIPPED[task]
    assert entry.recipe == recipe_key(task), "the recipe changed since the tunnel was shipped: rerun " \
        "scripts/reference_windtunnels.py --train/--ship"
    assert windtunnel_dir(task) == shipped_dir(task)
    for name, digest in entry.files.items():
        assert file_sha256(shipped_dir(task) / name) == digest, name
    metrics = json.loads((shipped_dir(task) / "metrics.json").read_text())
    for length, scores in entry.scores.items():  # what `geomprobe models` shows is the shipped evaluation
        assert {key: metrics["eval"][length][key] for key in scores} == scores
    assert metrics["config"]["threads"] == 1 and metrics["steps"] == metrics["config"]["steps"]


def test_the_shipped_tunnel_loads_without_training_in_well_under_a_second(real_recipes, geomprobe_cache):
    from geomprobe.models import load_model
    from geomprobe.windtunnel.builtin import ensure_windtunnel

    load_model("tiny-neox", device="cpu")  # the libraries' first-import cost, not the tunnel's
    trained = geomprobe_cache / "windtunnels"
    before = sorted(trained.glob("sula-*")) if trained.exists() else []  # other tests' short first-use tunnels
    started = time.perf_counter()
    path = ensure_windtunnel("sula")
    loaded = load_model("windtunnel-sula", device="cpu")
    elapsed = time.perf_counter() - started
    assert path == shipped_dir("sula") and loaded.source == str(shipped_dir("sula"))
    assert (sorted(trained.glob("sula-*")) if trained.exists() else []) == before  # nothing trained
    assert elapsed < 1.0, f"loading the shipped windtunnel-sula took {elapsed:.2f} s"
    state = {name: tensor for name, tensor in loaded.model.state_dict().items()}
    from safetensors.torch import load_file

    stored = load_file(shipped_dir("sula") / "model.safetensors")
    state["embed_out.weight"] = loaded.model.get_output_embeddings().weight  # saved under the checkpoint's name
    assert set(stored) <= set(state)  # the loaded module also holds buffers (rotary frequencies)
    assert all(bool((state[name] == tensor).all()) for name, tensor in stored.items())


def _copy_shipped(tmp_path, monkeypatch, task="sula"):
    root = tmp_path / "windtunnels"
    shutil.copytree(shipped_dir(task), root / task)
    monkeypatch.setattr(reference, "SHIPPED_ROOT", root)
    return root / task


def test_a_changed_shipped_file_is_refused_in_one_line(tmp_path, monkeypatch, real_recipes):
    from geomprobe.windtunnel.builtin import ensure_windtunnel

    copy = _copy_shipped(tmp_path, monkeypatch)
    assert ensure_windtunnel("sula") == copy
    data = bytearray((copy / "model.safetensors").read_bytes())
    data[-1] ^= 1  # one bit of one weight
    (copy / "model.safetensors").write_bytes(bytes(data))
    with pytest.raises(ModelNotFoundError) as err:
        ensure_windtunnel("sula")
    message = str(err.value)
    assert "\n" not in message and "model.safetensors does not match its SHA-256" in message and "reinstall" in message


def test_a_missing_shipped_file_is_refused_in_one_line(tmp_path, monkeypatch, real_recipes):
    from geomprobe.windtunnel.builtin import ensure_windtunnel

    copy = _copy_shipped(tmp_path, monkeypatch)
    (copy / "tokenizer.json").unlink()
    with pytest.raises(ModelNotFoundError, match=r"tokenizer.json is missing .*reinstall"):
        ensure_windtunnel("sula")


@pytest.mark.slow
@pytest.mark.parametrize("task", SHIPPED_TASKS)
def test_the_recipe_reproduces_the_shipped_weights_bit_for_bit_at_one_thread(task, tmp_path, real_recipes):
    """The recipe's first steps, trained here at one thread (with the full budget's schedule), give
    the very weights recorded when the shipped tunnel was trained: the trainer, the task sampler
    and the recipe still make the shipped model. Halfway through, the run is stopped and resumed,
    so resuming is bit-exact too. On a machine that computes otherwise (another torch build or
    CPU model: the low bits move) the digest is the one measured on that CPU where the entry has
    one (first_steps_on); elsewhere the stopped-and-resumed run must equal one trained straight
    through, bit for bit, and test_the_recipe_reproduces_sula_closely_anywhere checks the shipped
    weights to a tolerance."""
    import torch

    from geomprobe.windtunnel.builtin import recipe
    from geomprobe.windtunnel.reference import cpu_model, same_kernels
    from geomprobe.windtunnel.train import load_state, train

    steps, digest = SHIPPED[task].first_steps
    here = same_kernels(SHIPPED[task].made_with)
    if cpu_model() in SHIPPED[task].first_steps_on:
        digest = SHIPPED[task].first_steps_on[cpu_model()]
    threads = torch.get_num_threads()
    try:
        train(recipe(task), tmp_path / task, progress=False, until=steps // 2)
        train(recipe(task), tmp_path / task, progress=False, resume=True, until=steps)
        if not here:
            train(recipe(task), tmp_path / "straight", progress=False, until=steps)
    finally:
        torch.set_num_threads(threads)
    state = load_state(tmp_path / task)
    assert state["step"] == steps
    if not here:
        assert weights_sha256(state["model"]) == weights_sha256(load_state(tmp_path / "straight")["model"])
        return
    assert weights_sha256(state["model"]) == digest
    own = shipped_dir(task) / "checkpoints" / f"step-{steps:07d}.pt"  # the shipped run's own checkpoint there
    if own.exists() and digest == SHIPPED[task].first_steps[1]:
        assert weights_sha256(torch.load(own, weights_only=True)["state_dict"]) == digest


@pytest.mark.slow
def test_the_recipe_reproduces_sula_closely_anywhere(tmp_path, real_recipes):
    """On any CPU: the sula recipe's first 16 steps match the shipped run's own step-16 checkpoint
    to float32 rounding (bit for bit where the torch build and CPU kernels are MADE_WITH's)."""
    import torch

    from geomprobe.windtunnel.builtin import recipe
    from geomprobe.windtunnel.train import load_state, train

    steps = SHIPPED["sula"].first_steps[0]
    threads = torch.get_num_threads()
    try:
        train(recipe("sula"), tmp_path / "sula", progress=False, until=steps)
    finally:
        torch.set_num_threads(threads)
    trained = load_state(tmp_path / "sula")["model"]
    shipped = torch.load(shipped_dir("sula") / "checkpoints" / f"step-{steps:07d}.pt", weights_only=True)
    assert set(trained) == set(shipped["state_dict"])
    for name, tensor in shipped["state_dict"].items():
        assert torch.allclose(trained[name], tensor, rtol=1e-4, atol=1e-5), name


def test_weights_sha256_sees_one_bit():
    import torch

    state = {"a": torch.arange(6, dtype=torch.float32).reshape(2, 3), "b": torch.zeros(0)}
    changed = {"a": state["a"].clone(), "b": state["b"]}
    changed["a"].view(-1).view(torch.int32)[4] ^= 1
    assert weights_sha256(state) == weights_sha256({"b": state["b"], "a": state["a"].clone()})
    assert weights_sha256(state) != weights_sha256(changed)
    assert weights_sha256(state) != weights_sha256({"a": state["a"].reshape(3, 2), "b": state["b"]})


def test_models_lists_the_shipped_tunnels_with_their_score_against_bayes(real_recipes):
    from typer.testing import CliRunner

    from geomprobe.cli import app

    result = CliRunner().invoke(app, ["models"], env={"COLUMNS": "160"})
    assert result.exit_code == 0, result.output
    assert "wind tunnels against Bayes" in result.output
    line = next(line for line in result.output.splitlines() if line.startswith("windtunnel-sula ") and "bits" in line)
    mae = SHIPPED["sula"].scores["train_length"]["entropy_mae_bits"]
    assert f"{mae:.4f} bits" in line and SHIPPED["sula"].files["model.safetensors"][:12] in line


@pytest.mark.slow
def test_windtunnel_train_until_stops_with_a_resumable_state_and_resume_finishes(tmp_path):
    from typer.testing import CliRunner

    from geomprobe.cli import app

    out = tmp_path / "wt"
    args = ["windtunnel", "train", "--task", "sula", "--steps", "6", "--d-model", "16", "--n-layers", "1",
            "--out", str(out), "--quiet"]
    first = CliRunner().invoke(app, [*args, "--until", "3"])
    assert first.exit_code == 0, first.output
    assert "stopped at step 3" in first.output and not (out / "metrics.json").exists()
    second = CliRunner().invoke(app, [*args, "--resume"])
    assert second.exit_code == 0, second.output
    assert json.loads((out / "metrics.json").read_text())["steps"] == 6
    refused = CliRunner().invoke(app, ["windtunnel", "train", "--task", "sula", "--minutes", "1", "--until", "3",
                                       "--out", str(tmp_path / "other")])
    assert refused.exit_code != 0 and "--until needs a step budget" in refused.output
