"""One untrained copy alive at a time, by construction: each copy's weights are followed with a
weakref, and when the next copy is built none of the earlier ones may still be alive (no garbage
collection run by the test: geomprobe frees them, by reference counting or, where a cycle holds
a copy, by a collection of its own), whatever the caller keeps hold of. The naive loop that the helper replaced
keeps one alive, and the same check sees it."""

from __future__ import annotations

import gc
import weakref

import pytest

import geomprobe.nulls as nulls
from geomprobe.config import RunConfig
from geomprobe.runner import run


@pytest.fixture
def tracked(monkeypatch):
    """Patches fresh_copy: returns (alive_at_build, refs); alive_at_build[i] is how many earlier
    copies' modules were still alive when copy i was built."""
    alive_at_build, refs = [], []
    real = nulls.fresh_copy

    def fresh_copy(loaded, seed, build="own-init"):
        alive_at_build.append(sum(ref() is not None for ref in refs))
        copy = real(loaded, seed, build)
        refs.append(weakref.ref(copy.model))
        return copy

    monkeypatch.setattr(nulls, "fresh_copy", fresh_copy)
    return alive_at_build, refs


def test_each_null_drops_each_copy_before_the_next_even_when_the_caller_keeps_it(load_tiny, tracked):
    alive_at_build, refs = tracked
    loaded = load_tiny("tiny-neox")
    kept = []
    for spec, copy in nulls.each_null(loaded, nulls.null_specs("init:3", loaded)):
        assert copy.model is not None and spec.seed == nulls.INIT_SEED0 + len(kept)
        kept.append(copy)  # a caller that keeps every LoadedModel it was given
    gc.collect()
    assert alive_at_build == [0, 0, 0]
    assert [ref() for ref in refs] == [None, None, None]
    assert all(copy.model is None for copy in kept)


def test_the_naive_loop_keeps_a_second_copy_alive(load_tiny, tracked):
    """The negative control: `for spec in specs: with null_model(...) as copy:` with the name `copy`
    (or a list) still holding the previous LoadedModel while the next is built."""
    alive_at_build, _ = tracked
    loaded = load_tiny("tiny-neox")
    kept = []
    for spec in nulls.null_specs("init:3", loaded):
        with nulls.null_model(loaded, spec) as copy:
            kept.append(copy)
    assert alive_at_build == [0, 1, 2]


@pytest.mark.slow
@pytest.mark.parametrize("suite", ["geometry", "sula"])
def test_suites_hold_one_copy_at_a_time(suite, tmp_path, tracked):
    from geomprobe.suites.geometry import GeometryConfig
    from geomprobe.suites.sula import SulaConfig

    config = {"geometry": GeometryConfig(n_per_quintile=3, n_boot=20, n_null=10, init_seeds=0, step0="off",
                                         null="init:3"),
              "sula": SulaConfig(n_per_k=3, k_values="0,1,2", null="init:3", n_boot=20)}[suite]
    alive_at_build, refs = tracked
    from geomprobe.models.builtin import demo_prompts_path

    # geometry draws from the 60 demo prompts (the copies read its sample), not the 1,448-prompt corpus
    prompts = str(demo_prompts_path()) if suite == "geometry" else None
    run(RunConfig(model="tiny-neox", out=str(tmp_path / "run"), prompts=prompts), config, progress=False)
    gc.collect()
    assert len(alive_at_build) == 3, alive_at_build
    assert set(alive_at_build) == {0}, alive_at_build
    assert all(ref() is None for ref in refs)
