"""Every architecture family geomprobe claims has a built-in tiny model, so every family-parametrised
test runs on it (the checklist in CONTRIBUTING.md "Adding a model family")."""

import pytest
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


def test_the_family_table_is_the_one_source(load_tiny):
    """Every table keyed by model type is derived from geomprobe.families: adapters, the registry's
    type lookup, the planner's config classes and layouts, prefix reuse, the tiny models."""
    from geomprobe import families
    from geomprobe.models.registry import FAMILY_OF_TYPE
    from geomprobe.plan import CONFIG_CLASS_TYPES, LLAMA_LIKE
    from geomprobe.prefix import PROVEN

    rows = families.FAMILIES
    assert set(ADAPTERS) == set(rows) == set(FAMILY_OF_TYPE)
    assert {row.tiny for row in rows.values()} == set(TINY_MODELS)
    for model_type, row in rows.items():
        assert ADAPTERS[model_type].family == row.layout == FAMILY_OF_TYPE[model_type]
        assert getattr(transformers, row.config_class).model_type == model_type
        assert CONFIG_CLASS_TYPES[row.config_class] == model_type
        assert (model_type in PROVEN) == row.prefix_reuse and (model_type in LLAMA_LIKE) == (row.layout == "llama")
        assert TINY_MODELS[row.tiny].encoder == row.encoder
        loaded = load_tiny(row.tiny)
        assert loaded.model.config.model_type == model_type
        assert (getattr(loaded.adapter, "key_norm", lambda layer: None)(0) is not None) == row.key_norm


@pytest.mark.parametrize("name", ["tiny-qwen3", "tiny-gemma3"])
def test_key_frame_folds_the_key_norm_scale(load_tiny, name):
    """Qwen3: attention reads k = g * (W_K x) / rms per head; Gemma 3: (1 + g) * (W_K x) / rms. So
    key_weights(l) (W_K with the scale folded in) gives each head's key up to one positive scalar
    per token; without the fold (or, for Gemma, folding g instead of 1 + g) it would not."""
    import torch

    loaded = load_tiny(name)
    attn = loaded.adapter.attention(1)
    torch.manual_seed(0)
    with torch.no_grad():
        attn.k_norm.weight.copy_(torch.rand_like(attn.k_norm.weight) * 2 + 0.1)  # a scale far from 1
        x = torch.randn(5, loaded.adapter.shape.d_model)
        shape = loaded.adapter.shape
        actual = attn.k_norm(attn.k_proj(x).view(5, shape.n_kv_heads, shape.d_head))  # [5, kv, d]
        weight, bias = loaded.adapter.key_weights(1)  # [kv, D, d]
        assert bias is None
        folded = torch.einsum("td,hde->the", x, weight)
        raw = attn.k_proj(x).view(5, shape.n_kv_heads, shape.d_head)
    cosine = torch.nn.functional.cosine_similarity(folded, actual, dim=-1)
    assert torch.allclose(cosine, torch.ones_like(cosine), atol=1e-5)
    assert (torch.nn.functional.cosine_similarity(raw, actual, dim=-1) < 0.999).any()  # the fold matters
    if name == "tiny-gemma3":  # the offset matters: g alone is another frame
        from geomprobe.adapters import Adapter

        with torch.no_grad():
            raw_weight, _ = Adapter.key_weights(loaded.adapter, 1)  # W_K with no norm folded
            wrong = torch.einsum("td,hde->the", x, raw_weight * attn.k_norm.weight)
        assert (torch.nn.functional.cosine_similarity(wrong, actual, dim=-1) < 0.999).any()
    ratio = folded.norm(dim=-1) / actual.norm(dim=-1)
    assert (ratio > 0).all()


def test_gemma3_embeds_with_its_scale_and_sandwich_norms(load_tiny):
    """Gemma 3 multiplies embeddings by sqrt(d_model) inside the embedding module, and what attention
    and the MLP add to the residual is their post-norm's output: the adapter points there, and the
    layer-0 keys geomprobe computes for single tokens match the model's own at position 0."""
    import torch

    from geomprobe.mechanisms import layer0_token_keys

    loaded = load_tiny("tiny-gemma3")
    adapter, model = loaded.adapter, loaded.model
    block = adapter.layers()[1]
    assert adapter.attention_residual(1) is block.post_attention_layernorm
    assert adapter.mlp_output(1) is block.post_feedforward_layernorm
    assert adapter.norm_scale(block.input_layernorm) is not None
    embedding = model.get_input_embeddings()
    ids = torch.tensor([5, 17, 40])
    scale = loaded.model.config.hidden_size ** 0.5
    torch.testing.assert_close(embedding(ids), embedding.weight[ids] * scale, rtol=1e-3, atol=1e-5)
    seen = {}
    handle = adapter.key_module(0).register_forward_hook(lambda m, a, out: seen.__setitem__("k", out.detach()))
    with torch.no_grad():
        model(input_ids=ids[None, :1])
    handle.remove()
    keys = layer0_token_keys(loaded, ids[:1].numpy())  # [G, 1, d], before the key norm
    torch.testing.assert_close(torch.from_numpy(keys[:, 0]).flatten(), seen["k"][0, 0].float(), rtol=1e-4, atol=1e-5)


def test_no_family_is_named_outside_the_family_table_and_its_adapters():
    """What depends on a family is answered by its row (geomprobe.families), its layout
    (geomprobe.layouts) or its adapter (geomprobe/adapters/), so a new family is one row and one
    adapter file: no other module compares with a model type or layout name. models/published.py
    is exempt: its entries are published config.json fields, which name their model_type."""
    import ast
    from pathlib import Path

    import geomprobe
    from geomprobe.families import FAMILY_ROWS

    names = {row.model_type for row in FAMILY_ROWS} | {row.layout for row in FAMILY_ROWS}
    package = Path(geomprobe.__file__).parent
    allowed = {"families.py", "layouts.py", "models/published.py"}
    found = []
    for path in sorted(package.rglob("*.py")):
        where = path.relative_to(package).as_posix()
        if where in allowed or where.startswith("adapters/"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and node.value in names:
                found.append(f"geomprobe/{where}:{node.lineno}: {node.value!r}")
    assert not found, "ask the family row, its layout or its adapter instead:\n" + "\n".join(found)
