"""Every hub alias at its exact published shape, offline (geomprobe.models.published).

Each alias is built on the meta device (shapes, no memory): its parameter count must match the
published one, and geomprobe's adapter must read the shape the config declares (layers, query
and key/value heads, head width, width, sliding window) and split W_K per kv head. Where the
split needs real values (which rows of a fused or grouped projection belong to which head), a
one-layer model at the real width (vocabulary and MLP made small) runs on the CPU: the keys the
model itself computes must equal x W_K + b_K from the adapter, and the attention probabilities
geomprobe computes with its grouped-query convention (query head h reads kv head
h // (n_heads / n_kv_heads)) must equal the model's own eager attention weights.
"""

import re

import pytest
import torch
import transformers
from typer.testing import CliRunner

from geomprobe.adapters import adapter_for, family_of
from geomprobe.attention import FinalRowCapture, capture_attention  # also registers "geomprobe" attention
from geomprobe.cli import app
from geomprobe.models.published import PUBLISHED, build_on_meta, config_for, count_parameters, model_class, reduced
from geomprobe.models.registry import FAMILY_OF_TYPE, MODELS, format_params

HUB_ALIASES = list(PUBLISHED)

# published counts in the units `geomprobe models` prints them (model cards, Pythia README)
PARAMETER_STRINGS = {"pythia-14m": "14.1M", "pythia-70m": "70.4M", "pythia-160m": "162M", "pythia-410m": "405M",
                     "pythia-1b": "1.01B", "pythia-1.4b": "1.41B", "pythia-2.8b": "2.78B", "pythia-6.9b": "6.86B",
                     "pythia-12b": "11.8B", "phi-2": "2.78B", "llama-3.2-1b": "1.24B", "llama-3.2-3b": "3.21B",
                     "mistral-7b": "7.24B", "mistral-7b-v0.3": "7.25B", "mixtral-8x7b": "46.7B",
                     "all-minilm-l6-v2": "22.7M"}


@pytest.fixture(scope="module")
def meta_models():
    built = {}

    def get(alias):
        if alias not in built:
            built[alias] = build_on_meta(alias)
        return built[alias]

    return get


@pytest.mark.slow
@pytest.mark.parametrize("alias", HUB_ALIASES)
def test_meta_build_matches_the_published_parameter_count(alias, meta_models):
    model = meta_models(alias)
    assert all(p.device.type == "meta" for p in model.parameters())
    n = count_parameters(model)
    published = PUBLISHED[alias].n_params
    assert abs(n - published) <= 0.01 * published, f"{alias}: {n:,} parameters built, {published:,} published"
    assert MODELS[alias].n_params == published
    if alias in PARAMETER_STRINGS:
        assert format_params(published) == PARAMETER_STRINGS[alias]


@pytest.mark.parametrize("alias", HUB_ALIASES)
def test_adapter_reads_the_published_shape(alias, meta_models):
    model = meta_models(alias)
    config = model.config
    info = MODELS[alias]
    assert info.hub_id == PUBLISHED[alias].hub_id
    assert info.family == FAMILY_OF_TYPE[config.model_type] == family_of(config.model_type)
    adapter = adapter_for(model)
    s = adapter.shape
    n_kv = getattr(config, "num_key_value_heads", None) or config.num_attention_heads
    d_head = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    assert (s.n_layers, s.n_heads, s.n_kv_heads, s.d_head, s.d_model) == (
        config.num_hidden_layers, config.num_attention_heads, n_kv, d_head, config.hidden_size)
    # the registry's figures are the same, derived from the published fields
    assert (info.n_layers, info.n_heads, info.n_kv_heads, info.d_head, info.d_model) == (
        s.n_layers, s.n_heads, s.n_kv_heads, s.d_head, s.d_model)
    assert info.vocab == config.vocab_size == model.get_input_embeddings().weight.shape[0]
    assert info.context == config.max_position_embeddings
    assert info.sliding_window == getattr(config, "sliding_window", None)
    assert info.n_experts == getattr(config, "num_local_experts", None)
    if s.causal:
        assert s.sliding_window == getattr(config, "sliding_window", None)
    assert len(adapter.layers()) == s.n_layers
    # W_K split per kv head: on the meta device the adapter's reshapes give the shapes, no values
    for layer in (0, s.n_layers - 1):
        weight, bias = adapter.key_weights(layer)
        assert tuple(weight.shape) == (s.n_kv_heads, s.d_model, s.d_head)
        assert bias is None or tuple(bias.shape) == (s.n_kv_heads, s.d_head)
        # the modules' own outputs on meta inputs (a Linear, or GPT-2's Conv1D, which has no in/out_features)
        values = adapter.value_module(layer)(torch.empty(1, 1, s.d_model, device="meta"))
        assert adapter.split_values(values).shape[-2:] == (s.n_kv_heads, s.d_head)
        assert adapter.output_projection(layer)(torch.empty(1, 1, s.n_heads * s.d_head, device="meta")).shape[-1] == (
            s.d_model)


def test_published_specifics():
    assert config_for("mistral-7b").sliding_window == 4096
    assert config_for("mistral-7b-instruct").sliding_window == 4096
    for alias in ("mistral-7b-v0.3", "mistral-7b-instruct-v0.3"):
        config = config_for(alias)
        assert config.sliding_window is None and config.vocab_size == 32768
        assert PUBLISHED[alias].hub_id.endswith("-v0.3")
    mixtral = config_for("mixtral-8x7b")
    assert (mixtral.num_local_experts, mixtral.num_experts_per_tok, mixtral.sliding_window) == (8, 2, None)
    llama = config_for("llama-3.2-1b")
    rope = llama.rope_parameters
    assert (rope["rope_type"], rope["factor"], rope["low_freq_factor"], rope["high_freq_factor"],
            rope["original_max_position_embeddings"], rope["rope_theta"]) == ("llama3", 32.0, 1.0, 4.0, 8192, 500000.0)
    assert llama.tie_word_embeddings and config_for("llama-3.2-3b").tie_word_embeddings
    phi = config_for("phi-2")
    assert phi.rope_parameters["partial_rotary_factor"] == 0.4 and phi.qk_layernorm is False
    assert [config_for(f"pythia-{size}").vocab_size for size in ("410m", "6.9b", "12b")] == [50304, 50432, 50688]
    pythia = config_for("pythia-410m")
    assert pythia.use_parallel_residual and pythia.rope_parameters["partial_rotary_factor"] == 0.25
    assert model_class(config_for("all-minilm-l6-v2")) is transformers.AutoModel
    small = reduced("llama-3.2-1b", n_layers=2, vocab_size=1000)
    assert (small.num_hidden_layers, small.hidden_size, small.num_key_value_heads, small.head_dim) == (2, 2048, 8, 64)
    assert small.bos_token_id is None  # 128000 is out of a 1000-token vocabulary


def test_builtin_registry_shapes_match_their_models():
    from geomprobe.models.builtin import _COMMON, BUILTIN_CONFIGS

    for name, (config_class, overrides) in BUILTIN_CONFIGS.items():
        config = getattr(transformers, config_class)(**{**_COMMON, **overrides})
        model = build_on_meta(config)
        s, info = adapter_for(model).shape, MODELS[name]
        assert (info.n_layers, info.n_heads, info.n_kv_heads, info.d_head, info.d_model, info.sliding_window) == (
            s.n_layers, s.n_heads, s.n_kv_heads, s.d_head, s.d_model, s.sliding_window), name
        assert info.vocab == config.vocab_size and info.n_experts == getattr(config, "num_local_experts", None)


class _KeyCapture:
    """Records each layer's post-rotary query and key as the model computes them."""

    def __init__(self):
        self.query, self.key, self.scaling = {}, {}, {}

    def record(self, layer, module, query, key, value, attention_mask, scaling, dropout=0.0):
        self.query[layer], self.key[layer] = query.detach().clone(), key.detach().clone()
        self.scaling[layer] = scaling if scaling is not None else query.shape[-1] ** -0.5


def _last_row_probs(query, key, scaling, kv_of_head):
    """Causal attention probabilities of the last query row with query head h reading kv head
    kv_of_head[h]: [batch, n_heads, kv_len]."""
    keys = key[:, kv_of_head]  # [batch, n_heads, kv_len, d]
    return torch.softmax(torch.einsum("bhd,bhkd->bhk", query[:, :, -1], keys) * scaling, dim=-1)


# the smaller families at their real width, one layer, vocabulary 1000 (W_K does not depend on the MLP)
REAL_WIDTH = ["pythia-410m", "llama-3.2-1b", "phi-2", "mistral-7b", "gpt2"]


@pytest.mark.slow
@pytest.mark.parametrize("alias", REAL_WIDTH)
def test_key_split_and_grouping_on_real_values(alias):
    torch.manual_seed(0)
    config = reduced(alias, n_layers=1, vocab_size=1000, intermediate_size=256)
    full = config_for(alias)
    assert (config.hidden_size, config.num_attention_heads, getattr(config, "num_key_value_heads", None)) == (
        full.hidden_size, full.num_attention_heads, getattr(full, "num_key_value_heads", None))
    model = model_class(config).from_config(config, attn_implementation="geomprobe", dtype=torch.float32).eval()
    adapter = adapter_for(model)
    s = adapter.shape
    ids = torch.randint(0, config.vocab_size, (2, 6))

    inputs = {}
    hook = adapter.key_module(0).register_forward_pre_hook(lambda module, args: inputs.update(x=args[0].detach()))
    keys, final = _KeyCapture(), FinalRowCapture(final_index=torch.full((2,), ids.shape[1] - 1), keep_probs=True)
    try:
        with torch.no_grad(), capture_attention(keys), capture_attention(final):
            model(input_ids=ids)
    finally:
        hook.remove()
    key = keys.key[0]  # [batch, n_kv_heads, T, d_head], post-rotary
    assert tuple(key.shape) == (2, s.n_kv_heads, ids.shape[1], s.d_head)

    # W_K split: at position 0 the rotary embedding is the identity, so the model's keys there are
    # exactly x W_K + b_K, head by head, with the adapter's [n_kv_heads, d_model, d_head] weights
    weight, bias = adapter.key_weights(0)
    assert tuple(weight.shape) == (s.n_kv_heads, s.d_model, s.d_head)
    mine = torch.einsum("bD,gDd->bgd", inputs["x"][:, 0].float(), weight)
    if bias is not None:
        mine = mine + bias
    torch.testing.assert_close(mine, key[:, :, 0].float(), rtol=1e-4, atol=1e-5)

    # grouped-query attention: geomprobe's probabilities (query head h reads kv head
    # h // (n_heads / n_kv_heads)) are the model's own eager attention weights
    model.set_attn_implementation("eager")
    with torch.no_grad():
        eager = model(input_ids=ids, output_attentions=True).attentions[0][:, :, -1].float()
    group = s.n_heads // s.n_kv_heads
    right = torch.arange(s.n_heads) // group
    torch.testing.assert_close(final.probs[0], eager, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(_last_row_probs(keys.query[0].float(), key.float(), keys.scaling[0], right), eager,
                               rtol=1e-4, atol=1e-5)
    if group > 1:  # the check can tell groupings apart: interleaved kv heads give other weights
        wrong = torch.arange(s.n_heads) % s.n_kv_heads
        assert (_last_row_probs(keys.query[0].float(), key.float(), keys.scaling[0], wrong) - eager).abs().max() > 1e-3
    if alias == "mistral-7b":
        assert s.sliding_window == config.sliding_window == 4096


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _models_output(columns: int) -> list[str]:
    result = CliRunner().invoke(app, ["models"], env={"COLUMNS": str(columns)})
    assert result.exit_code == 0, result.output
    return _ANSI.sub("", result.output).splitlines()


def test_models_listing_fits_80_columns():
    lines = _models_output(80)
    too_long = [line for line in lines if len(line) > 80]
    assert not too_long, too_long
    text = "\n".join(lines)
    for alias, info in MODELS.items():
        rows = [line.split() for line in lines if line.split()[:1] == [alias]]
        assert any(format_params(info.n_params) in row for row in rows), f"{alias}: {rows}"
        if info.kind == "hub":
            assert info.hub_id in text
    for alias, expected in PARAMETER_STRINGS.items():
        assert any(line.split()[:1] == [alias] and expected in line.split() for line in lines), alias
    assert "gated: accept the licence" in text  # the Llama caveat (README, models)
    assert "wind tunnels against Bayes" in text


def test_models_listing_uses_a_wide_terminal():
    lines = _models_output(300)
    assert max(len(line) for line in lines) <= 300
    header = next(line for line in lines if line.split()[:1] == ["alias"])
    assert "hub id" in header and "note" in header and "kv heads" in header
    row = next(line for line in lines if line.split()[:1] == ["mistral-7b"])
    assert "mistralai/Mistral-7B-v0.1" in row and "7.24B" in row.split()


def test_cached_column_reads_the_hf_cache_without_downloading(tmp_path, monkeypatch):
    from huggingface_hub import constants

    from geomprobe.cli import _cached

    def fake_snapshot(repo_id, files):
        repo = tmp_path / f"models--{repo_id.replace('/', '--')}"
        (repo / "refs").mkdir(parents=True)
        (repo / "refs" / "main").write_text("abc123")
        for name in files:
            (repo / "snapshots" / "abc123").mkdir(parents=True, exist_ok=True)
            (repo / "snapshots" / "abc123" / name).write_text("{}")

    fake_snapshot("EleutherAI/pythia-70m", ["config.json", "model.safetensors"])
    fake_snapshot("EleutherAI/pythia-14m", ["config.json"])
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path))
    assert _cached(MODELS["pythia-70m"]) == "yes"
    assert _cached(MODELS["pythia-14m"]) == "config only"
    assert _cached(MODELS["mistral-7b"]) == "no"
    assert _cached(MODELS["tiny-llama"]) == "built-in"
    assert _cached(MODELS["windtunnel-hmm"]) in ("yes", "trained on first use")
