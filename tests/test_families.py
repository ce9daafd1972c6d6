"""Every architecture family geomprobe claims has a built-in tiny model, so every family-parametrised
test runs on it (the checklist in README "Adding a model family")."""

import transformers

from geomprobe.adapters import ADAPTERS, adapter_for
from geomprobe.models.builtin import TINY_MODELS, tiny_shape


def test_every_adapter_model_type_has_a_tiny_model():
    covered = {getattr(transformers, tiny.config_class).model_type for tiny in TINY_MODELS.values()}
    missing = sorted(set(ADAPTERS) - covered)
    assert not missing, f"model types with an adapter but no tiny model in TINY_MODELS: {missing}"


def test_tiny_model_listing_matches_the_built_model(load_tiny):
    for name, tiny in TINY_MODELS.items():
        loaded = load_tiny(name)
        shape = loaded.adapter.shape
        assert adapter_for(loaded.model).family == tiny.family == loaded.family
        assert tiny_shape(name) == {"n_layers": shape.n_layers, "n_heads": shape.n_heads,
                                    "n_kv_heads": shape.n_kv_heads, "d_model": shape.d_model}
