"""Extraction against independent references: the attention function's own query/key/value
tensors, eager attention probabilities, and the model's full logits."""

import hashlib

import numpy as np
import pytest
import torch
from conftest import ALL_TINY
from transformers import AttentionInterface, AutoModel, AutoModelForCausalLM
from transformers.integrations.sdpa_attention import sdpa_attention_forward
from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

from geomprobe.extraction import ExtractionConfig, extract

# A reference attention function that records the key/value tensors exactly as the model hands
# them to attention (post-rotary keys), so the adapters' head layouts are checked against the
# model's own code, not against the layout they assume.
_RECORD: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}


def _recording_attention(module, query, key, value, attention_mask, **kwargs):
    _RECORD[module.layer_idx] = (key.detach().clone(), value.detach().clone())
    return sdpa_attention_forward(module, query, key, value, attention_mask, **kwargs)


AttentionInterface.register("gp_test_record", _recording_attention)
AttentionMaskInterface.register("gp_test_record", sdpa_mask)


def _reload(loaded, attn):
    cls = AutoModel if loaded.family == "bert" else AutoModelForCausalLM
    return cls.from_pretrained(loaded.source, attn_implementation=attn, dtype=torch.float32).eval()


@pytest.mark.slow
@pytest.mark.parametrize("name", ALL_TINY)
def test_shapes(load_tiny, varied_prompts, name):
    loaded = load_tiny(name)
    shape = loaded.adapter.shape
    ex = extract(loaded, varied_prompts, ExtractionConfig(readouts=("values", "z", "resid")), progress=False)
    n, L = len(varied_prompts), shape.n_layers
    assert ex["values"].shape == (n, L, shape.n_kv_heads, shape.d_head)
    assert ex["z"].shape == (n, L, shape.n_heads, shape.d_head)
    assert ex["resid"].shape == (n, L, shape.d_model)
    assert ex["attn_entropy_bits"].shape == (n, L, shape.n_heads)
    assert ex["n_visible_keys"].shape == (n, L)
    assert ("next_entropy_bits" in ex.arrays) == (name != "tiny-bert")
    if name in ("tiny-llama", "tiny-mistral", "tiny-mixtral"):
        assert shape.n_kv_heads < shape.n_heads
    window = shape.sliding_window
    kinds = loaded.adapter.attention_kinds()  # Gemma 3: sliding and global layers interleaved
    for layer, kind in enumerate(kinds):
        expected_visible = np.minimum(ex["n_tokens"], window) if kind == "sliding" else ex["n_tokens"]
        assert (ex["n_visible_keys"][:, layer] == expected_visible).all(), (layer, kind)
    if name == "tiny-gemma3":
        assert "sliding" in kinds and "global" in kinds
    if window is not None:
        assert ex["n_tokens"].max() > 4 * window  # the window really is shorter than the prompts
    # entropy can never exceed log2 of what the row may see
    assert (ex["attn_entropy_bits"] <= np.log2(ex["n_visible_keys"])[:, :, None] + 1e-4).all()


@pytest.mark.slow
@pytest.mark.parametrize("name", ALL_TINY)
def test_batched_equals_one_at_a_time(load_tiny, varied_prompts, name):
    loaded = load_tiny(name)
    config = ExtractionConfig(readouts=("values", "z", "resid"), batch_size=8)
    batched = extract(loaded, varied_prompts, config, progress=False)
    single = extract(loaded, varied_prompts, ExtractionConfig(readouts=("values", "z", "resid"), batch_size=1),
                     progress=False)
    lengths = batched["n_tokens"]
    assert lengths.max() >= 8 * lengths.min()  # very different lengths in one batch
    for key in batched.arrays:
        np.testing.assert_allclose(batched[key], single[key], atol=1e-4, rtol=1e-4, err_msg=key)


@pytest.mark.slow
@pytest.mark.parametrize("name", ALL_TINY)
def test_values_and_keys_match_the_models_own_tensors(load_tiny, varied_prompts, name):
    """values == the v the model attends with, at the final token; W_K [G, D, d] applied to the
    layer's input reproduces the model's keys at position 0 (where rotary is the identity)."""
    loaded = load_tiny(name)
    adapter = loaded.adapter
    reference = _reload(loaded, "gp_test_record")
    prompt = varied_prompts[3]
    ex = extract(loaded, [prompt], progress=False)
    ids = loaded.tokenizer(prompt.text, return_tensors="pt")
    inputs_of_key_proj = {}
    ref_adapter = type(adapter)(reference)
    handles = [ref_adapter.key_module(layer).register_forward_pre_hook(
        lambda m, a, layer=layer: inputs_of_key_proj.__setitem__(layer, a[0].detach()))
        for layer in range(adapter.shape.n_layers)]
    with torch.no_grad():
        reference(**ids)
    for handle in handles:
        handle.remove()
    last = ids["input_ids"].shape[1] - 1
    for layer in range(adapter.shape.n_layers):
        key, value = _RECORD[layer]  # [1, G, T, d]
        np.testing.assert_allclose(ex["values"][0, layer], value[0, :, last].numpy(), atol=1e-5)
        w_k, b_k = adapter.key_weights(layer)  # [G, D, d]
        manual = torch.einsum("d,gdk->gk", inputs_of_key_proj[layer][0, 0].float(), w_k)
        if b_k is not None:
            manual = manual + b_k
        norm = getattr(adapter, "key_norm", lambda layer: None)(layer)
        if norm is not None:  # Qwen3, Gemma 3: k = g * (W_K x) / rms(W_K x) per head, g folded into w_k
            raw = ref_adapter.key_module(layer)(inputs_of_key_proj[layer][0, 0]).detach().view(adapter.shape.n_kv_heads, -1)
            eps = getattr(norm, "variance_epsilon", None) or norm.eps  # Qwen3's name, Gemma's name
            manual = manual / torch.sqrt(raw.float().pow(2).mean(-1, keepdim=True) + eps)
        np.testing.assert_allclose(manual.numpy(), key[0, :, 0].numpy(), atol=1e-4)


@pytest.mark.slow
@pytest.mark.parametrize("name", ALL_TINY)
def test_attention_entropy_matches_eager_probabilities(load_tiny, varied_prompts, name):
    loaded = load_tiny(name)
    eager = _reload(loaded, "eager")
    ex = extract(loaded, varied_prompts, progress=False)
    for row, prompt in enumerate(varied_prompts):
        ids = loaded.tokenizer(prompt.text, return_tensors="pt")
        with torch.no_grad():
            out = eager(**ids, output_attentions=True)
        for layer, attn in enumerate(out.attentions):
            probs = attn[0, :, -1].double()  # [H, T]
            entropy_bits = -(probs * torch.log2(probs.clamp_min(1e-300))).sum(-1)
            np.testing.assert_allclose(ex["attn_entropy_bits"][row, layer], entropy_bits.numpy(), atol=1e-4)
            assert ex["n_visible_keys"][row, layer] == int((probs[0] > 0).sum())
        if name != "tiny-bert":
            logp = torch.log_softmax(out.logits[0, -1].double(), -1)
            np.testing.assert_allclose(ex["next_entropy_bits"][row], float(-(logp.exp() * logp).sum() / np.log(2)),
                                       atol=1e-4)


@pytest.mark.slow
def test_attention_is_not_trivially_uniform(load_tiny, varied_prompts):
    """The tiny models' init is wide enough that the entropy checks above compare real structure."""
    ex = extract(load_tiny("tiny-neox"), varied_prompts, progress=False)
    gap = np.log2(ex["n_visible_keys"])[:, :, None] - ex["attn_entropy_bits"]
    assert gap.max() > 0.5


@pytest.mark.slow
def test_named_token_probabilities(load_tiny, varied_prompts):
    loaded = load_tiny("tiny-llama")
    tokens = [" the", " of"]
    ids = [loaded.tokenizer.encode(t, add_special_tokens=False) for t in tokens]
    assert all(len(i) == 1 for i in ids)
    ex = extract(loaded, varied_prompts, ExtractionConfig(tokens=tokens), progress=False)
    eager = _reload(loaded, "eager")
    enc = loaded.tokenizer(varied_prompts[0].text, return_tensors="pt")
    with torch.no_grad():
        probs = torch.softmax(eager(**enc).logits[0, -1].double(), -1)
    np.testing.assert_allclose(ex["token_probs"][0], probs[[i[0] for i in ids]].numpy(), atol=1e-6)


def test_multi_token_label_is_refused(load_tiny, varied_prompts):
    from geomprobe.errors import ConfigError

    loaded = load_tiny("tiny-neox")
    word = " zyxwvutsrq"
    assert len(loaded.tokenizer.encode(word, add_special_tokens=False)) > 1
    with pytest.raises(ConfigError, match="tokens under this model's tokenizer"):
        extract(loaded, varied_prompts, ExtractionConfig(tokens=[word]), progress=False)


@pytest.mark.slow
def test_layer_subset_and_out_of_range(load_tiny, varied_prompts):
    from geomprobe.errors import ConfigError

    loaded = load_tiny("tiny-phi")
    full = extract(loaded, varied_prompts, progress=False)
    some = extract(loaded, varied_prompts, ExtractionConfig(layers=[1, 3]), progress=False)
    np.testing.assert_allclose(some["values"], full["values"][:, [1, 3]], atol=1e-6)
    with pytest.raises(ConfigError, match="out of range: this model has 4 layers"):
        extract(loaded, varied_prompts, ExtractionConfig(layers=[4]), progress=False)


@pytest.mark.slow
def test_prompt_longer_than_the_model_is_refused_or_truncated(load_tiny, varied_prompts):
    from geomprobe.errors import ConfigError

    loaded = load_tiny("tiny-bert")  # 512 positions
    long_prompt = type(varied_prompts[0])("long", " ".join(p.text for p in varied_prompts) * 3)
    with pytest.raises(ConfigError, match="more than this model's 512 positions"):
        extract(loaded, [long_prompt], progress=False)
    ex = extract(loaded, [long_prompt], ExtractionConfig(max_tokens=512), progress=False)
    assert ex["n_tokens"][0] == 512


@pytest.mark.slow
def test_uniform_attention_has_entropy_log2_of_the_visible_keys(load_tiny, varied_prompts):
    """With W_Q = 0 every score is equal, so each final-token row is uniform over the keys it can see
    (Mistral: its window of 8): the extracted entropy must be log2(n_visible) exactly."""
    for name in ("tiny-llama", "tiny-mistral"):
        _check_uniform_rows(load_tiny(name, dtype="float32"), varied_prompts, windowed=name == "tiny-mistral")


def _check_uniform_rows(loaded, varied_prompts, windowed):
    for layer in range(loaded.adapter.shape.n_layers):
        attention = loaded.adapter.attention(layer)
        attention.q_proj.weight.data.zero_()
        if attention.q_proj.bias is not None:
            attention.q_proj.bias.data.zero_()
    ex = extract(loaded, varied_prompts, progress=False)
    expected = np.log2(ex["n_visible_keys"])[:, :, None] * np.ones_like(ex["attn_entropy_bits"])
    np.testing.assert_allclose(ex["attn_entropy_bits"], expected, atol=1e-4)
    if windowed:
        assert (ex["n_visible_keys"] == 8).all()
    else:
        assert ex["n_visible_keys"].max() > 8 * ex["n_visible_keys"].min()  # the prompts differ in length


def _final_norm(model):
    from geomprobe.adapters import adapter_for

    return adapter_for(model).final_norm()  # None for BERT: no final norm


def _perturb_final_norm(model):
    """Give the final norm a non-trivial scale and bias (init is weight 1, bias 0), so a readout that
    skipped the norm's affine part would differ."""
    norm = _final_norm(model)
    if norm is None:
        return None
    generator = torch.Generator().manual_seed(0)
    norm.weight.data = 1 + 0.5 * torch.randn(norm.weight.shape, generator=generator)
    if getattr(norm, "bias", None) is not None:
        norm.bias.data = 0.3 * torch.randn(norm.bias.shape, generator=generator)
    return norm


@pytest.mark.slow
@pytest.mark.parametrize("name", ALL_TINY)
def test_hidden_is_transformers_hidden_states(load_tiny, varied_prompts, name):
    """readout "hidden" [n, L, D] == model(..., output_hidden_states=True).hidden_states[l + 1] at the
    final token (one prompt at a time, no padding), with the final norm's weight and bias perturbed;
    below the last layer it is "resid", at the last layer it is the final norm's output (BERT: resid)."""
    loaded = load_tiny(name, dtype="float32")  # a fresh copy: its final norm is edited below
    norm = _perturb_final_norm(loaded.model)
    assert (norm is None) == (name == "tiny-bert")
    n_layers = loaded.adapter.shape.n_layers
    ex = extract(loaded, varied_prompts, ExtractionConfig(readouts=("hidden", "resid")), progress=False)
    assert ex["hidden"].shape == (len(varied_prompts), n_layers, loaded.adapter.shape.d_model)
    for row, prompt in enumerate(varied_prompts):
        ids = loaded.tokenizer(prompt.text, return_tensors="pt")
        with torch.no_grad():
            out = loaded.model(**ids, output_hidden_states=True)
        assert len(out.hidden_states) == n_layers + 1
        for layer in range(n_layers):
            np.testing.assert_allclose(ex["hidden"][row, layer], out.hidden_states[layer + 1][0, -1].numpy(),
                                       atol=1e-4, rtol=1e-4, err_msg=f"{name} layer {layer}")
    np.testing.assert_array_equal(ex["hidden"][:, :-1], ex["resid"][:, :-1])
    if norm is None:
        np.testing.assert_array_equal(ex["hidden"], ex["resid"])
    else:
        assert np.abs(ex["hidden"][:, -1] - ex["resid"][:, -1]).max() > 0.1
        with torch.no_grad():
            normed = norm(torch.from_numpy(ex["resid"][:, -1])).numpy()
        np.testing.assert_allclose(ex["hidden"][:, -1], normed, atol=1e-4, rtol=1e-4)
    some = extract(loaded, varied_prompts, ExtractionConfig(layers=[1, n_layers - 1], readouts=("hidden",)),
                   progress=False)
    np.testing.assert_allclose(some["hidden"], ex["hidden"][:, [1, n_layers - 1]], atol=1e-5)
    assert "resid" not in some.arrays


# Run directories of an extraction: streamed to disk, memory-mapped, and cleaned after an interruption.

class _Interrupt(Exception):
    pass


def _interrupted(loaded, prompts, config, out, after_batches):
    """Extract into `out`, killed (an exception from the forward pass) after `after_batches` batches."""
    from geomprobe.hooks import edit_values

    calls = {"n": 0}

    def fail(layer, v):
        calls["n"] += 1
        if calls["n"] > after_batches:
            raise _Interrupt()
        return v

    with pytest.raises(_Interrupt), edit_values(loaded.adapter, [0], fail):
        extract(loaded, prompts, config, out_dir=out, progress=False)


def _forwards(loaded, prompts, config, out):
    from geomprobe.hooks import edit_values

    calls = {"n": 0}

    def count(layer, v):
        calls["n"] += 1
        return v

    with edit_values(loaded.adapter, [0], count):
        ex = extract(loaded, prompts, config, out_dir=out, progress=False)
    return ex, calls["n"]


@pytest.mark.slow
def test_final_arrays_are_memory_mapped_and_equal_the_in_memory_extraction(load_tiny, demo_prompts, tmp_path):
    from geomprobe.extraction import load_extraction

    loaded = load_tiny("tiny-neox")
    config = ExtractionConfig(readouts=("values", "z", "resid", "hidden"), tokens=[" the"], batch_size=4)
    in_memory = extract(loaded, demo_prompts[:18], config, progress=False)
    on_disk = extract(loaded, demo_prompts[:18], config, out_dir=tmp_path / "extraction", progress=False)
    again = load_extraction(tmp_path / "extraction")
    assert sorted(on_disk.arrays) == sorted(in_memory.arrays) == sorted(again.arrays)
    assert on_disk.meta == again.meta
    assert {key: value for key, value in on_disk.meta.items() if key != "array_files"} == in_memory.meta
    # on disk only: each array file's sha256 and size as it was written
    assert on_disk.meta["array_files"] == {
        path.name: {"sha256": hashlib.sha256(path.read_bytes()).hexdigest(), "bytes": path.stat().st_size}
        for path in sorted((tmp_path / "extraction").glob("*.npy"))}
    for name, array in in_memory.arrays.items():
        assert type(array) is np.ndarray
        for mapped in (on_disk[name], again[name]):
            assert isinstance(mapped, np.memmap) and not mapped.flags.writeable, name
            assert mapped.dtype == array.dtype
            np.testing.assert_array_equal(mapped, array, err_msg=name)  # bit for bit
    assert on_disk.prompt_ids == again.prompt_ids == [p.id for p in demo_prompts[:18]]
    assert not (tmp_path / "extraction" / "shards").exists()
    assert not [p.name for p in (tmp_path / "extraction").iterdir() if p.name.startswith(".")]


@pytest.mark.slow
def test_a_damaged_shard_is_dropped_and_recomputed_bit_for_bit(load_tiny, demo_prompts, tmp_path):
    loaded = load_tiny("tiny-neox")
    prompts, config = demo_prompts[:20], ExtractionConfig(batch_size=4)  # 5 batches
    clean, _ = _forwards(loaded, prompts, config, tmp_path / "clean")
    out = tmp_path / "extraction"
    _interrupted(loaded, prompts, config, out, after_batches=3)
    shards = sorted((out / "shards").glob("shard-*.npz"))
    assert len(shards) == 3
    shards[0].write_bytes(shards[0].read_bytes()[: shards[0].stat().st_size // 2])  # truncated
    shards[1].write_bytes(b"not a zip file at all")  # bad zip
    with pytest.warns(UserWarning, match=r"shard .*shard-0.*cannot be read .*deleted, its prompts are recomputed"):
        resumed, forwards = _forwards(loaded, prompts, config, out)
    assert forwards == 4  # the two damaged batches and the two never run; the intact shard is kept
    for name in clean.arrays:
        np.testing.assert_array_equal(resumed[name], clean[name], err_msg=name)


@pytest.mark.slow
def test_temporary_files_and_orphaned_shards_are_removed(load_tiny, demo_prompts, tmp_path):
    loaded = load_tiny("tiny-neox")
    prompts, config = demo_prompts[:12], ExtractionConfig(batch_size=4)
    out = tmp_path / "extraction"
    _interrupted(loaded, prompts, config, out, after_batches=2)
    shard = sorted((out / "shards").glob("shard-*.npz"))[0]
    kept_copy = shard.read_bytes()
    # what atomic_write_bytes (tempfile.mkstemp(prefix=".<name>.", suffix=".geomprobe-tmp")) leaves when killed
    stale = [out / ".request.json.k2v9_x0q.geomprobe-tmp", out / ".values.npy.abcdefgh.geomprobe-tmp",
             out / "shards" / ".shard-000008.npz.12345678.geomprobe-tmp"]
    for path in stale:
        path.write_bytes(b"partial")
    unrelated = [out / "notes.txt", out / ".keep", out / ".values.npy.toolongsuffix", out / ".values.npy.abcdefgh"]
    for path in unrelated:
        path.write_text("not extraction's")
    resumed, forwards = _forwards(loaded, prompts, config, out)
    assert forwards == 1
    assert not any(path.exists() for path in stale)
    assert all(path.exists() for path in unrelated)

    # killed between meta.json and the shards' removal: the shards beside a finished extraction are orphans
    (out / "shards").mkdir()
    (out / "shards" / shard.name).write_bytes(kept_copy)
    (out / ".meta.json.zzzzzzzz.geomprobe-tmp").write_bytes(b"{")
    finished, forwards = _forwards(loaded, prompts, config, out)
    assert forwards == 0  # read back, not recomputed
    assert not (out / "shards").exists() and not (out / ".meta.json.zzzzzzzz.geomprobe-tmp").exists()
    for name in resumed.arrays:
        np.testing.assert_array_equal(finished[name], resumed[name])


@pytest.mark.slow
def test_arrays_of_an_earlier_extraction_with_other_readouts_are_not_kept(load_tiny, demo_prompts, tmp_path):
    from geomprobe.extraction import load_extraction

    loaded = load_tiny("tiny-neox")
    out = tmp_path / "extraction"
    extract(loaded, demo_prompts[:6], ExtractionConfig(readouts=("values", "z")), out_dir=out, progress=False)
    assert (out / "z.npy").exists()
    ex = extract(loaded, demo_prompts[:6], ExtractionConfig(readouts=("values",)), out_dir=out, progress=False)
    assert "z" not in ex.arrays and not (out / "z.npy").exists()
    assert sorted(load_extraction(out).arrays) == sorted(ex.arrays)


@pytest.mark.slow
def test_progress_off_a_terminal_is_plain_lines_on_stderr(tmp_path):
    """stdout and stderr are pipes: no live bar (which would print nothing until the end), but a line
    every ~10% of the batches, on stderr, with the caller's label; nothing on stdout."""
    import re
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from geomprobe.extraction import ExtractionConfig, extract\n"
        "from geomprobe.models import load_model\n"
        "from geomprobe.models.builtin import demo_prompts_path\n"
        "from geomprobe.prompts import read_prompts\n"
        "prompts = read_prompts(demo_prompts_path())[:40]\n"
        "extract(load_model('tiny-neox'), prompts, ExtractionConfig(batch_size=2), out_dir=sys.argv[1],\n"
        "        label='sula: main')\n")
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path / "extraction")], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    lines = re.findall(r"^extract sula: main: (\d+)/40 prompts, \d+ s$", done.stderr, flags=re.M)
    assert [int(n) for n in lines] == list(range(4, 41, 4))  # 20 batches: every 2nd, i.e. every 10%


def test_streamed_prompt_hash_and_file_equal_the_prompts_modules(demo_prompts, tmp_path):
    from geomprobe.extraction import _prompts_sha256, _write_prompts
    from geomprobe.prompts import prompts_hash, write_prompts

    for prompts in (demo_prompts, demo_prompts[:1], []):
        assert _prompts_sha256(prompts) == prompts_hash(prompts)
    write_prompts(demo_prompts, tmp_path / "a.jsonl")
    _write_prompts(demo_prompts, tmp_path / "b.jsonl")
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()


def test_a_finished_extraction_of_another_model_is_not_returned(load_tiny, demo_prompts, tmp_path):
    """extract(tiny-llama, prompts, out_dir=D) where D holds tiny-neox's finished extraction of the
    same prompts: tiny-llama's own arrays, never tiny-neox's."""
    neox, llama = load_tiny("tiny-neox"), load_tiny("tiny-llama")
    prompts, out = demo_prompts[:4], tmp_path / "extraction"
    first = extract(neox, prompts, out_dir=out, progress=False)
    assert first["values"].shape[2:] == (neox.adapter.shape.n_kv_heads, neox.adapter.shape.d_head)
    again = extract(llama, prompts, out_dir=out, progress=False)
    expected = extract(llama, prompts, progress=False)
    np.testing.assert_array_equal(np.asarray(again["next_entropy_bits"]), expected["next_entropy_bits"])
    assert extract(llama, prompts, out_dir=out, progress=False).meta["model_identity"] == again.meta["model_identity"]


def test_a_truncated_array_is_refused_and_computed_again(load_tiny, demo_prompts, tmp_path):
    """values.npy with 2 rows for 6 prompts: load_extraction refuses it in one line, and extract()
    computes the extraction again instead of returning it."""
    from geomprobe.errors import RunDirectoryError
    from geomprobe.extraction import load_extraction

    loaded, prompts, out = load_tiny("tiny-neox"), demo_prompts[:6], tmp_path / "extraction"
    full = np.asarray(extract(loaded, prompts, out_dir=out, progress=False)["values"]).copy()
    np.save(out / "values.npy", full[:2])
    with pytest.raises(RunDirectoryError, match=r"values\.npy holds shape \[2, .*the extraction is damaged"):
        load_extraction(out)
    with pytest.warns(UserWarning, match="computing it again"):
        again = extract(loaded, prompts, out_dir=out, progress=False)
    np.testing.assert_array_equal(np.asarray(again["values"]), full)
    np.testing.assert_array_equal(np.asarray(load_extraction(out)["values"]), full)


def _alarm(seconds: int):
    """A SIGALRM that raises: a read that blocks (np.load on a FIFO) fails the test instead of hanging it."""
    import signal

    def ring(signum, frame):
        raise TimeoutError(f"still blocked after {seconds} s")

    signal.signal(signal.SIGALRM, ring)
    signal.alarm(seconds)


def test_a_shard_that_is_a_fifo_is_dropped_and_recomputed(load_tiny, demo_prompts, tmp_path):
    import os
    import signal

    loaded = load_tiny("tiny-neox")
    prompts, config = demo_prompts[:12], ExtractionConfig(batch_size=4)  # 3 batches
    clean, _ = _forwards(loaded, prompts, config, tmp_path / "clean")
    out = tmp_path / "extraction"
    _interrupted(loaded, prompts, config, out, after_batches=2)
    shard = sorted((out / "shards").glob("shard-*.npz"))[0]
    shard.unlink()
    os.mkfifo(shard)
    _alarm(60)
    try:
        with pytest.warns(UserWarning, match=r"shard .*FIFO.*deleted, its prompts are recomputed"):
            resumed, forwards = _forwards(loaded, prompts, config, out)
    finally:
        signal.alarm(0)
    assert forwards == 2  # the FIFO's batch and the one never run
    for name in clean.arrays:
        np.testing.assert_array_equal(resumed[name], clean[name], err_msg=name)


def test_a_folder_in_place_of_an_array_is_refused_and_kept(load_tiny, demo_prompts, tmp_path):
    """An unfinished extraction whose values.npy is a folder: one line before the arrays are
    assembled, the folder and what it holds left as they are; once it is gone the shards are used."""
    from geomprobe.errors import RunDirectoryError

    loaded = load_tiny("tiny-neox")
    prompts, config = demo_prompts[:8], ExtractionConfig(batch_size=4)
    out = tmp_path / "extraction"
    _interrupted(loaded, prompts, config, out, after_batches=1)
    (out / "values.npy").mkdir()
    (out / "values.npy" / "mine.txt").write_text("keep")
    with pytest.raises(RunDirectoryError, match=r"values\.npy is a folder where geomprobe writes a file: remove it"):
        extract(loaded, prompts, config, out_dir=out, progress=False)
    assert (out / "values.npy" / "mine.txt").read_text() == "keep"
    assert not [p for p in out.iterdir() if p.name.startswith(".values.npy.")]  # no temporary left
    import shutil

    shutil.rmtree(out / "values.npy")
    _, forwards = _forwards(loaded, prompts, config, out)
    assert forwards == 0  # both batches' shards were kept
