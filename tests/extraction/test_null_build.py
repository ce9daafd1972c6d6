"""Untrained copies drawn once: `init:N` (the default; `init-once:N` is the same build under its
older name) builds each copy on the meta device and runs the model's own initialiser alone;
`init-legacy:N` (what `init:N` was before) is the from_config build, which draws torch's default
init first.

What must hold, on every family and the wind tunnels: the computed buffers (rotary frequencies,
position ids) and every weight the initialiser sets to a constant are identical to the legacy
build's; every randomly drawn weight has the legacy build's distribution (two-sample KS test) but
is another draw; the first random tensor the initialiser fills is the first thing drawn from the
seeded generator (nothing was drawn before it: the default init is skipped, not repeated), which
the legacy build fails; a seed gives the same copy twice; tied embeddings stay tied."""

from __future__ import annotations

import pytest
import torch
from scipy import stats

from geomprobe.errors import ConfigError
from geomprobe.families import FAMILIES
from geomprobe.nulls import fresh_copy, null_specs

MODELS = [row.tiny for row in FAMILIES.values()] + [pytest.param("windtunnel-sula", marks=pytest.mark.slow)]  # 0.6M weights


def _random(name: str, tensor: torch.Tensor) -> bool:
    """A tensor the initialiser draws (not a constant: norms, biases and zeros have one value)."""
    return tensor.numel() > 1 and bool(tensor.float().std() > 0)


@pytest.mark.parametrize("name", MODELS)
def test_one_draw_matches_the_legacy_build_in_law(load_tiny, name):
    loaded = load_tiny(name)
    legacy = fresh_copy(loaded, 1000, "legacy").model
    own = fresh_copy(loaded, 1000, "own-init").model
    for (key, a), (_, b) in zip(legacy.named_buffers(), own.named_buffers(), strict=True):
        assert torch.equal(a, b), key
    drawn = 0
    for (key, a), (key_b, b) in zip(legacy.named_parameters(), own.named_parameters(), strict=True):
        assert key == key_b and a.shape == b.shape and a.dtype == b.dtype
        assert torch.isfinite(b).all(), key
        if not _random(key, a):
            assert torch.equal(a, b), key
            continue
        drawn += 1
        assert not torch.equal(a, b), f"{key}: the same draw"
        x, y = a.detach().flatten().double().numpy(), b.detach().flatten().double().numpy()
        assert stats.ks_2samp(x[:20000], y[:20000]).pvalue > 1e-4, key
    assert drawn >= 3


def _first_draw_matches(model, seed: int, std: float) -> list[str]:
    """Random tensors equal to the first normal draw of a freshly seeded generator."""
    found = []
    for key, tensor in model.named_parameters():
        if _random(key, tensor):
            generator = torch.Generator().manual_seed(seed)
            fresh = torch.empty_like(tensor, dtype=torch.float32).normal_(0.0, std, generator=generator)
            if torch.equal(fresh.to(tensor.dtype), tensor):
                found.append(key)
    return found


@pytest.mark.parametrize("name", ["tiny-llama", "tiny-neox"])
def test_nothing_is_drawn_before_the_model_initialiser(load_tiny, name):
    loaded = load_tiny(name)
    std = loaded.model.config.initializer_range
    assert len(_first_draw_matches(fresh_copy(loaded, 1000, "own-init").model, 1000, std)) == 1
    # the legacy build draws torch's default init first: no tensor starts the generator's stream
    assert _first_draw_matches(fresh_copy(loaded, 1000, "legacy").model, 1000, std) == []


def test_a_seed_is_one_copy_and_another_seed_another(load_tiny):
    loaded = load_tiny("tiny-phi")
    a, b, c = (fresh_copy(loaded, seed, "own-init").model.state_dict() for seed in (1000, 1000, 1001))
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert any(not torch.equal(a[k], c[k]) for k in a)


def test_tied_embeddings_stay_tied(tmp_path, load_tiny):
    import transformers

    loaded = load_tiny("tiny-llama")
    config = loaded.model.config.__class__(**{**loaded.model.config.to_dict(), "tie_word_embeddings": True})
    tied = transformers.AutoModelForCausalLM.from_config(config)
    tied.save_pretrained(tmp_path / "tied")
    loaded.tokenizer.save_pretrained(tmp_path / "tied")
    from geomprobe.models import load_model

    model = fresh_copy(load_model(str(tmp_path / "tied"), device="cpu"), 1000, "own-init").model
    assert model.get_output_embeddings().weight is model.get_input_embeddings().weight


def test_the_null_spec_names_its_build():
    default, once, legacy = null_specs("init:1")[0], null_specs("init-once:1")[0], null_specs("init-legacy:1")[0]
    assert (default.name, default.build) == ("init-1000", "own-init")
    assert (once.name, once.build) == ("init-once-1000", "own-init")
    assert (legacy.name, legacy.build) == ("init-legacy-1000", "legacy")
    assert null_specs("auto", n_params=1e6)[0].build == "own-init"
    assert "drawn once" in default.describe() and default.to_dict()["build"] == "own-init"
    assert "build" not in legacy.to_dict()  # as results recorded before the default changed read
    assert [s.name for s in null_specs("init:1,init-legacy:1")] == ["init-1000", "init-legacy-1000"]
    assert len(null_specs("init-legacy:auto", n_params=1e6)) == 19
    with pytest.raises(ConfigError, match="N >= 1"):
        null_specs("init-legacy:0")


def test_a_copy_of_either_build_is_its_own_extraction_identity(load_tiny):
    from geomprobe.extraction import _identity

    loaded = load_tiny("tiny-neox")
    own, other, legacy = (fresh_copy(loaded, 1000), fresh_copy(loaded, 1001, "own-init"),
                          fresh_copy(loaded, 1000, "legacy"))
    assert len({str(_identity(m)) for m in (loaded, own, other)}) == 3
    assert _identity(legacy) == _identity(loaded)  # as before: a legacy run directory resumes


@pytest.mark.slow
def test_a_run_meets_the_copies_of_its_own_seed(tmp_path, demo_prompts):
    """--seed 2 builds and records copies 3000 and 3001 (not seed 0's 1000 and 1001), each
    entry with its seed and build, so two runs with other seeds do not share their copies' errors."""
    import json

    from geomprobe.config import RunConfig
    from geomprobe.runner import run
    from geomprobe.suites.geometry import GeometryConfig

    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text("".join(json.dumps(p.to_dict()) + "\n" for p in demo_prompts[:20]))
    out = tmp_path / "run"
    run(RunConfig(model="tiny-llama", prompts=str(prompts), out=str(out), seed=2),
        GeometryConfig(n_per_quintile=0, n_boot=10, n_null=5, init_seeds=0, step0="off", null="init:2"),
        progress=False)
    models = json.loads((out / "geometry" / "results.json").read_text())["untrained_null"]["models"]
    assert [(m["name"], m["seed"], m["build"]) for m in models] == [("init-3000", 3000, "own-init"),
                                                                    ("init-3001", 3001, "own-init")]
