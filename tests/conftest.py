"""Shared fixtures: tests never touch the hub or the user's caches.

Built-in tiny models (random init from configs, see geomprobe.models.builtin) are built once per
session into a temporary GEOMPROBE_CACHE; HF_HUB_OFFLINE=1 makes any hub access fail fast.
"""

import os

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# Built-in wind tunnels train for a few steps only in tests (their cache key records it).
os.environ["GEOMPROBE_WINDTUNNEL_STEPS"] = "20"

from geomprobe.models.builtin import TINY_MODELS  # noqa: E402  (after the environment above)

# every built-in test model, one per architecture family (geomprobe.models.builtin.TINY_MODELS)
CAUSAL_TINY = [name for name, tiny in TINY_MODELS.items() if not tiny.encoder]
ALL_TINY = list(TINY_MODELS)


@pytest.fixture(scope="session", autouse=True)
def geomprobe_cache(tmp_path_factory):
    path = tmp_path_factory.mktemp("geomprobe-cache")
    previous = os.environ.get("GEOMPROBE_CACHE")
    os.environ["GEOMPROBE_CACHE"] = str(path)
    yield path
    if previous is None:
        os.environ.pop("GEOMPROBE_CACHE", None)
    else:
        os.environ["GEOMPROBE_CACHE"] = previous


@pytest.fixture(scope="session")
def demo_prompts():
    from geomprobe.models.builtin import demo_prompts_path
    from geomprobe.prompts import read_prompts

    return read_prompts(demo_prompts_path())


@pytest.fixture(scope="session")
def varied_prompts(demo_prompts):
    """Eight prompts from the shortest to the longest of the demo set."""
    ordered = sorted(demo_prompts, key=lambda p: len(p.text))
    step = (len(ordered) - 1) / 7
    return [ordered[round(i * step)] for i in range(8)]


_loaded = {}


@pytest.fixture(scope="session")
def load_tiny(geomprobe_cache):
    """load_tiny(name, **kwargs) -> LoadedModel, cached per session for default kwargs."""
    from geomprobe.models import load_model

    def load(name, **kwargs):
        if kwargs:
            return load_model(name, **kwargs)
        if name not in _loaded:
            _loaded[name] = load_model(name)
        return _loaded[name]

    return load
