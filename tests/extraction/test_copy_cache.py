"""Untrained copies' extractions kept across runs (geomprobe.copycache): a second model of the
same architecture meets the same copies without computing them again, with the same values; the
key separates what changes a copy's extraction; the cache is bounded, listed and cleared."""

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from geomprobe import copycache, run
from geomprobe.cli import app
from geomprobe.config import RunConfig
from geomprobe.extraction import load_extraction
from geomprobe.nulls import fresh_copy
from geomprobe.suites.sula import SulaConfig


@pytest.fixture
def copy_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GEOMPROBE_COPY_CACHE_MB", "512")
    monkeypatch.setattr(copycache, "cache_dir", lambda: tmp_path / "cache")
    return tmp_path / "cache" / "copies"


def _model_dir(load_tiny, tmp_path, seed):
    """An untrained tiny-llama of another seed than the copies': a 'checkpoint' of the architecture."""
    loaded = load_tiny("tiny-llama")
    path = tmp_path / f"model-{seed}"
    fresh_copy(loaded, seed).model.save_pretrained(path)
    loaded.tokenizer.save_pretrained(path)
    return str(path)


def _sula(model, out, n_per_k=3, null="init:2"):
    run(RunConfig(model=model, out=str(out)), SulaConfig(n_per_k=n_per_k, n_boot=20, null=null), progress=False)
    return json.loads((out / "sula" / "results.json").read_text())["untrained_null"]


def _copy_meta(out, name):
    return json.loads((out / "sula" / "nulls" / name / "extraction-main" / "meta.json").read_text())


@pytest.mark.slow
def test_a_second_checkpoint_meets_the_same_copies_from_the_cache(tmp_path, load_tiny, copy_cache, capsys):
    first, second = _model_dir(load_tiny, tmp_path, 11), _model_dir(load_tiny, tmp_path, 12)
    one = _sula(first, tmp_path / "run-1")
    assert "from_copy_cache" not in _copy_meta(tmp_path / "run-1", "init-1000")
    assert len(copycache.entries()) == 2  # one extraction per copy
    two = _sula(second, tmp_path / "run-2")
    for name in ("init-1000", "init-1001"):
        meta = _copy_meta(tmp_path / "run-2", name)
        assert meta["from_copy_cache"] and meta["model"].startswith(second)
        a = load_extraction(tmp_path / "run-1" / "sula" / "nulls" / name / "extraction-main")
        b = load_extraction(tmp_path / "run-2" / "sula" / "nulls" / name / "extraction-main")
        for array in ("token_probs", "values"):
            if array in a.arrays:
                np.testing.assert_array_equal(a[array], b[array])
    # the copies' figures are the same in both runs; the models' are not
    assert [m["mae_bits"] for m in one["models"]] == [m["mae_bits"] for m in two["models"]]
    assert one["comparisons"]["mae_bits"]["model"] != two["comparisons"]["mae_bits"]["model"]
    # computed afresh (cache off), the copies give the same values
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GEOMPROBE_COPY_CACHE_MB", "0")
        fresh = _sula(second, tmp_path / "run-3")
    assert "from_copy_cache" not in _copy_meta(tmp_path / "run-3", "init-1000")
    assert [m["mae_bits"] for m in fresh["models"]] == [m["mae_bits"] for m in two["models"]]


@pytest.mark.slow
def test_other_prompts_or_copies_miss_and_the_cache_stays_bounded(tmp_path, load_tiny, copy_cache, monkeypatch):
    model = _model_dir(load_tiny, tmp_path, 11)
    _sula(model, tmp_path / "run-1", null="init:1")
    _sula(model, tmp_path / "run-2", n_per_k=4, null="init:1")  # other prompts: computed, a second entry
    assert "from_copy_cache" not in _copy_meta(tmp_path / "run-2", "init-1000")
    _sula(model, tmp_path / "run-3", null="init:2")  # seed 1000 again (hit) and 1001 (new)
    assert _copy_meta(tmp_path / "run-3", "init-1000")["from_copy_cache"]
    assert "from_copy_cache" not in _copy_meta(tmp_path / "run-3", "init-1001")
    held = copycache.entries()
    assert len(held) == 3 and {entry["seed"] for entry in held} == {1000, 1001}
    # bounded: a limit below two entries keeps only the one used last
    newest = max(held, key=lambda entry: entry["last_used"])
    removed = copycache.trim(limit=newest["bytes"] + 1)
    assert len(removed) == 2 and [entry["folder"] for entry in copycache.entries()] == [newest["folder"]]
    # listed and cleared from the command line, nothing outside the cache touched
    monkeypatch.setattr("geomprobe.copycache.cache_dir", lambda: copy_cache.parent)
    listed = CliRunner().invoke(app, ["cache", "list", "--json"])
    assert listed.exit_code == 0 and len(json.loads(listed.stdout)["entries"]) == 1
    cleared = CliRunner().invoke(app, ["cache", "clear"])
    assert cleared.exit_code == 0 and "removed 1 copy extractions" in cleared.stdout
    assert copycache.entries() == [] and (tmp_path / "run-1" / "sula" / "results.json").exists()


def test_the_key_is_the_architecture_not_the_checkpoint(load_tiny):
    """Two checkpoints of one architecture share a copy's identity; another seed, build, dtype or
    architecture does not; a model that is not a copy has none."""
    loaded = load_tiny("tiny-llama")
    a, b = fresh_copy(loaded, 1000), fresh_copy(loaded, 1000)
    assert a._copy_identity == b._copy_identity
    assert fresh_copy(loaded, 1001)._copy_identity != a._copy_identity
    assert fresh_copy(loaded, 1000, build="legacy")._copy_identity != a._copy_identity
    assert fresh_copy(load_tiny("tiny-neox"), 1000)._copy_identity["class"] != a._copy_identity["class"]
    assert copycache.key_of(loaded, {"prompts_sha256": "x"}) is None


def test_a_bad_limit_is_a_one_line_error(monkeypatch):
    from geomprobe.errors import ConfigError

    monkeypatch.setenv("GEOMPROBE_COPY_CACHE_MB", "lots")
    with pytest.raises(ConfigError, match="GEOMPROBE_COPY_CACHE_MB='lots'"):
        copycache.limit_bytes()


@pytest.mark.slow
def test_the_ablation_meets_its_copies_conditions_in_the_cache(tmp_path, copy_cache, load_tiny):
    """The ablation's edited passes on a copy are not an extraction: their per-copy entry is kept
    instead. A second model of the architecture gets the same entries without running them; other
    options (here the number of random axes) miss."""
    from geomprobe.suites.ablation import AblationConfig

    def ablation(model, out, n_random=2):
        run(RunConfig(model=model, out=str(out)),
            AblationConfig(n_per_k=3, n_boot=20, n_random=n_random, ops="cut", null="init:2"), progress=False)
        return json.loads((out / "ablation" / "results.json").read_text())["untrained_null"]["models"]

    first = ablation(_model_dir(load_tiny, tmp_path, 7), tmp_path / "run-1")
    assert first and not any("from_copy_cache" in m for m in first)
    assert any(m["conditions"] for m in first)  # the copies ran conditions worth keeping
    second = ablation(_model_dir(load_tiny, tmp_path, 8), tmp_path / "run-2")
    assert all("from_copy_cache" in m for m in second)
    assert [{k: v for k, v in m.items() if k != "from_copy_cache"} for m in second] == first
    assert not (tmp_path / "run-2" / "ablation" / "nulls" / "init-1000" / "conditions").exists()  # nothing ran
    other = ablation(_model_dir(load_tiny, tmp_path, 9), tmp_path / "run-3", n_random=3)
    assert not any("from_copy_cache" in m for m in other)
    assert {e["what"] for e in copycache.entries()} >= {"extraction", "ablation null_ablation"}
