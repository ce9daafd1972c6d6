"""Models passed in as objects (geomprobe.models.borrowed): a transformers model, a TransformerLens
bridge, an nnsight LanguageModel give the arrays the same model gives by name, share its weights
(never a copy), and are put back as they were; what cannot be read is refused in one line."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from geomprobe import RunConfig, run
from geomprobe.errors import ConfigError
from geomprobe.extraction import ExtractionConfig, extract
from geomprobe.models import load_model

PROMPTS = ["the cat sat on the mat", "two plus two is", "a b c", "once upon a time there was"]


@pytest.fixture(scope="module")
def by_name(load_tiny):
    loaded = load_tiny("tiny-neox")
    return loaded, extract(loaded, PROMPTS, progress=False)


def fresh_hf(source, **kwargs):
    import transformers

    return transformers.AutoModelForCausalLM.from_pretrained(source, **kwargs)


def same_arrays(a, b, exact=True):
    for name in ("values", "attn_entropy_bits", "next_entropy_bits"):
        x, y = np.asarray(getattr(a, name)), np.asarray(getattr(b, name))
        assert x.shape == y.shape, name
        if exact:
            assert np.array_equal(x, y), name
        else:
            np.testing.assert_allclose(x, y, atol=2e-5, rtol=1e-5, err_msg=name)


@pytest.mark.slow
def test_hf_model_object_gives_the_named_models_arrays_and_is_put_back(by_name):
    loaded, reference = by_name
    model = fresh_hf(loaded.source)
    model.train()
    pointers = {name: p.data_ptr() for name, p in model.named_parameters()}
    before = model.config._attn_implementation
    with load_model(model, tokenizer=loaded.tokenizer) as held:
        assert held.model is model  # the object itself, not a copy
        assert {name: p.data_ptr() for name, p in held.model.named_parameters()} == pointers
        assert model.config._attn_implementation == "geomprobe" and not model.training
        same_arrays(extract(held, PROMPTS, progress=False), reference)
    assert model.config._attn_implementation == before and model.training  # as it was
    same_arrays(extract(model, PROMPTS, tokenizer=loaded.tokenizer, progress=False), reference)
    assert model.config._attn_implementation == before and model.training


@pytest.mark.slow
def test_tokenizer_is_found_beside_a_local_model_and_refused_when_there_is_none(by_name, tmp_path):
    loaded, reference = by_name
    model = fresh_hf(loaded.source)  # config._name_or_path: the local directory, which holds the tokenizer
    same_arrays(extract(model, PROMPTS, progress=False), reference)
    model.config._name_or_path = ""
    with pytest.raises(ConfigError, match=r"without its tokenizer: pass it, load_model\(model, tokenizer=tok\)"):
        extract(model, PROMPTS, progress=False)
    assert model.config._attn_implementation != "geomprobe"  # a refusal changes nothing


@pytest.mark.slow
def test_nnsight_language_model(by_name):
    nnsight = pytest.importorskip("nnsight")
    loaded, reference = by_name
    model = fresh_hf(loaded.source)
    wrapped = nnsight.LanguageModel(model, tokenizer=loaded.tokenizer)
    held = load_model(wrapped)
    assert held.model is model and held.in_memory["kind"] == "nnsight.LanguageModel"
    same_arrays(extract(held, PROMPTS, progress=False), reference)
    held.release()
    assert model.config._attn_implementation == "sdpa"
    with wrapped.trace("a b c"):  # nnsight still works on it afterwards
        out = wrapped.output.save()
    assert out.logits.shape[1] == 3


@pytest.mark.slow
def test_transformer_bridge_shares_its_tensors_and_both_backends_agree(by_name):
    pytest.importorskip("transformer_lens")
    from transformer_lens.model_bridge import TransformerBridge

    loaded, reference = by_name
    model = fresh_hf(loaded.source, attn_implementation="eager")
    bridge = TransformerBridge.boot_transformers(loaded.source, hf_model=model, tokenizer=loaded.tokenizer)
    storage = {t.data_ptr() for t in [*model.parameters(), *model.buffers()]}
    held = load_model(bridge)
    assert held.bridge is bridge
    assert all(p.data_ptr() in storage for p in held.model.parameters())  # the bridge's tensors, no copy
    assert all(b.data_ptr() in storage for b in held.model.buffers())
    # With the model's own tokenizer, geomprobe's hooks on the bridge's tensors read what they read by name
    same_arrays(extract(bridge, PROMPTS, tokenizer=loaded.tokenizer, progress=False), reference)
    # By default the bridge's tokenizer (TransformerLens prepends a BOS token to GPT-NeoX prompts),
    # and the tl backend runs the bridge itself: the two backends agree on it
    hf_side = extract(bridge, PROMPTS, progress=False)
    tl_side = extract(bridge, PROMPTS, ExtractionConfig(backend="tl"), progress=False)
    assert list(hf_side.arrays["n_tokens"]) == [n + 1 for n in reference.arrays["n_tokens"]]
    same_arrays(hf_side, tl_side, exact=False)


@pytest.mark.slow
def test_run_on_a_model_object_matches_the_run_by_name_and_records_it(load_tiny, tmp_path):
    loaded = load_tiny("tiny-neox")
    named = run(RunConfig(model="tiny-neox", out=str(tmp_path / "named"), device="cpu"), "extract", progress=False)
    model = fresh_hf(loaded.source)
    held = run(RunConfig(model=model, out=str(tmp_path / "held")), "extract", progress=False)
    assert model.config._attn_implementation == "sdpa"
    a, b = (json.loads((d / "extract" / "results.json").read_text()) for d in (named, held))
    for drop in ("model", "created", "versions"):
        a.pop(drop, None), b.pop(drop, None)
    assert a == b
    manifest = json.loads((held / "manifest.json").read_text())
    identity = manifest["config"]["model_identity"]
    assert identity["kind"] == "in-memory" and identity["class"].endswith("GPTNeoXForCausalLM")
    assert manifest["model"]["in_memory"]["origin"] == str(loaded.source)
    # The same weights resume; one changed weight is another model, refused without --overwrite
    run(RunConfig(model=model, out=str(tmp_path / "held")), "extract", progress=False)
    with torch.no_grad():
        model.gpt_neox.layers[0].attention.dense.weight[0, 0] += 1.0
    with pytest.raises(Exception, match="overwrite"):
        run(RunConfig(model=model, out=str(tmp_path / "held")), "extract", progress=False)


@pytest.mark.slow
def test_quantized_model_keeps_its_placement(load_tiny):
    pytest.importorskip("bitsandbytes")
    import transformers

    loaded = load_tiny("tiny-neox")
    model = fresh_hf(loaded.source, device_map="cpu",
                     quantization_config=transformers.BitsAndBytesConfig(load_in_8bit=True))
    kinds = {type(m).__name__ for m in model.modules()}
    with load_model(model, tokenizer=loaded.tokenizer) as held:
        assert held.quantize == "8bit" and held.device == "cpu"
        ex = extract(held, PROMPTS, progress=False)
    assert {type(m).__name__ for m in model.modules()} == kinds and "Linear8bitLt" in kinds
    assert np.isfinite(ex.values).all()


def test_what_cannot_be_read_is_refused_in_one_line(by_name):
    loaded, _ = by_name
    model = fresh_hf(loaded.source)
    cases = [
        (lambda: load_model(torch.nn.Linear(2, 2)), "reads Hugging Face transformers models"),
        (lambda: RunConfig(model=3.5), "--model takes str, not float 3.5"),
        (lambda: RunConfig(model=object()), "--model takes str, not object"),
        (lambda: run(RunConfig(model=model, backend="tl"), "extract", progress=False),
         "tl backend boots TransformerLens on a copy loaded from disk"),
        (lambda: run(RunConfig(model=model, quantize="8bit"), "extract", progress=False), "--quantize loads a model"),
        (lambda: load_model(model, tokenizer=loaded.tokenizer, revision="step0"), "drop them"),
        (lambda: load_model("tiny-neox", tokenizer=loaded.tokenizer), "tokenizer= goes with a model object"),
    ]
    for call, message in cases:
        with pytest.raises(ConfigError) as error:
            call()
        assert message in str(error.value) and "\n" not in str(error.value) and len(str(error.value)) < 300
    assert model.config._attn_implementation == "sdpa"
