"""The Python API without traps: SULA prompts built for the model (the sula suite's
own), plain-string prompts, an Extraction that prints short and is read by layer and readout name,
load_run / load_extraction, and load_model's device default equal to the CLI's."""

import inspect
import json
import warnings

import numpy as np
import pytest

from geomprobe.errors import ConfigError, RunDirectoryError
from geomprobe.extraction import ExtractionConfig, NotExtractedError, extract, load_extraction
from geomprobe.prompts import Prompt
from geomprobe.suites.sula import prompts_for
from geomprobe.sula_task import CONDITIONS, SulaSpec, choose_labels, generate

SUITE_SETTINGS = dict(n_per_k=6, k_values=(0, 1, 2, 4), seed=3)


def _read_jsonl(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _n_unknown(tokenizer, texts) -> int:
    return sum(tokenizer(text)["input_ids"].count(tokenizer.unk_token_id) for text in texts)


def _one_line(error) -> str:
    text = str(error.value)
    assert text and "\n" not in text, text
    return text


@pytest.fixture(scope="module")
def sula_run(tmp_path_factory):
    """The sula suite on windtunnel-sula, small, with a non-default seed and the lexical_remap control."""
    from geomprobe import RunConfig, run
    from geomprobe.suites.sula import SulaConfig

    out = tmp_path_factory.mktemp("api") / "run"
    settings = dict(SUITE_SETTINGS)
    seed = settings.pop("seed")
    returned = run(RunConfig(model="windtunnel-sula", out=str(out), seed=seed),
                   SulaConfig(**settings, controls=("lexical_remap",), null="off", n_boot=20), progress=False)
    assert returned.path == out
    return out


# ----------------------------------------------------------------------------------------------
# SULA prompts for a model


@pytest.mark.slow
def test_prompts_for_a_wind_tunnel_are_the_sula_suites_and_in_its_vocabulary(sula_run, load_tiny):
    loaded = load_tiny("windtunnel-sula")
    tokenizer = loaded.tokenizer
    sula = prompts_for(loaded, **SUITE_SETTINGS, conditions=("main", "lexical_remap"))
    for condition in ("main", "lexical_remap"):
        written = _read_jsonl(sula_run / "sula" / f"prompts-{condition}.jsonl")
        assert [r.text for r in sula[condition]] == [row["text"] for row in written], condition
        assert [r.id for r in sula[condition]] == [row["id"] for row in written]
        assert [r.H_bayes for r in sula[condition]] == pytest.approx([row["H_bayes"] for row in written])
        assert _n_unknown(tokenizer, [r.text for r in sula[condition]]) == 0
    assert sula.windtunnel and sula.choice.source == "windtunnel"
    assert sula.tokens() == [" dax", " lug"] and sula.tokens("lexical_remap") == [" wug", " kep"]
    assert [p.text for p in sula.prompts()] == [r.text for r in sula["main"]]
    assert all(r.text.startswith(". ") for r in sula["main"] if r.k == 0)  # the wind tunnel's k = 0 form
    every = prompts_for(loaded, n_per_k=4, conditions=CONDITIONS)
    assert every.conditions == list(CONDITIONS)
    assert _n_unknown(tokenizer, [r.text for c in CONDITIONS for r in every[c]]) == 0
    assert len(repr(every).splitlines()) == 1 and "dax/lug" in repr(every)

    # the trap the builder replaces: the generic carriers are words this vocabulary lacks
    trap = generate(SulaSpec(labels=choose_labels(tokenizer).main, n_per_k=10, seed=0), ("main",))["main"]
    assert _n_unknown(tokenizer, [r.text for r in trap]) > 0


@pytest.mark.slow
def test_prompts_for_refuses_words_the_tokenizer_does_not_know(load_tiny):
    loaded = load_tiny("windtunnel-sula")
    with pytest.raises(ConfigError) as error:
        prompts_for(loaded, n_per_k=4, template="Examples: {examples}\nQuery {query}:")
    text = _one_line(error)
    assert "'k0-0000'" in text and "'Examples'" in text and "'Query'" in text and "drop the template" in text
    with pytest.raises(ConfigError) as error:
        prompts_for(loaded, n_per_k=4, labels=("zorp", "blick"))
    assert "'zorp' is not a single token" in _one_line(error)
    with pytest.raises(ConfigError) as error:
        prompts_for(loaded, n_per_k=4, conditions=("main", "shuffle"))
    assert "shuffle" in _one_line(error)
    sula = prompts_for(loaded, n_per_k=4)
    with pytest.raises(ConfigError) as error:
        sula["shuffled"]
    assert "conditions=" in _one_line(error)


@pytest.mark.slow
def test_prompts_for_a_language_model_follows_its_tokenizer(load_tiny):
    loaded = load_tiny("tiny-neox")
    sula = prompts_for(loaded, n_per_k=5, seed=1, conditions=("main", "label_mask"), template="{examples}; {query} ->")
    choice = choose_labels(loaded.tokenizer)
    expected = generate(SulaSpec(labels=choice.main, remap_labels=choice.remap, n_per_k=5, seed=1,
                                 template="{examples}; {query} ->"), ("main", "label_mask"))
    assert not sula.windtunnel and sula.spec.labels == choice.main
    for condition in ("main", "label_mask"):
        assert [r.text for r in sula[condition]] == [r.text for r in expected[condition]]
    assert sula.tokens() == [choice.token_strings[w] for w in choice.main]
    with pytest.raises(ConfigError) as error:
        prompts_for(load_tiny("tiny-bert"), n_per_k=4)
    assert "encoder" in _one_line(error)


# ----------------------------------------------------------------------------------------------
# extract(): plain strings, the unknown-token warning


TEXTS = ["The cat sat on the", "Two plus two is", "Once upon a time there", "The capital of France is"]


@pytest.mark.slow
def test_extract_takes_plain_strings_as_prompts(load_tiny):
    loaded = load_tiny("tiny-neox")
    config = ExtractionConfig(tokens=[" the"], batch_size=2)
    from_strings = extract(loaded, TEXTS, config, progress=False)
    from_prompts = extract(loaded, [Prompt(f"prompt-{i}", text) for i, text in enumerate(TEXTS)], config, progress=False)
    assert from_strings.prompt_ids == from_prompts.prompt_ids == [f"prompt-{i}" for i in range(len(TEXTS))]
    assert sorted(from_strings.arrays) == sorted(from_prompts.arrays)
    for name, array in from_prompts.arrays.items():
        np.testing.assert_array_equal(from_strings[name], array, err_msg=name)
    one = extract(loaded, TEXTS[1], progress=False)
    assert one.prompt_ids == ["prompt-0"]
    np.testing.assert_allclose(one.values[0], from_strings.values[1], atol=1e-5)  # another batch: float noise
    mixed = extract(loaded, [TEXTS[0], Prompt("mine", TEXTS[1])], progress=False)
    assert mixed.prompt_ids == ["prompt-0", "mine"]
    np.testing.assert_allclose(mixed.values, from_strings.values[:2], atol=1e-5)
    with pytest.raises(ConfigError) as error:
        extract(loaded, [TEXTS[0], 3], progress=False)
    assert "prompt 1 is of type int" in _one_line(error)
    with pytest.raises(ConfigError) as error:
        extract(loaded, [Prompt("prompt-1", "a"), TEXTS[0]], progress=False)
    assert "'prompt-1'" in _one_line(error)


@pytest.mark.slow
def test_extract_warns_once_about_unknown_tokens(load_tiny):
    loaded = load_tiny("windtunnel-sula")
    tokenizer = loaded.tokenizer
    trap = [r.to_prompt() for r in generate(SulaSpec(labels=("dax", "lug"), n_per_k=3, seed=0), ("main",))["main"]]
    affected = sum(tokenizer.unk_token_id in tokenizer(p.text)["input_ids"] for p in trap)
    assert 0 < affected < len(trap)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        ex = extract(loaded, trap, progress=False)
    unknown = [w for w in seen if "unknown token" in str(w.message)]
    assert len(unknown) == 1, [str(w.message) for w in seen]
    message = str(unknown[0].message)
    assert "\n" not in message and f"{affected} of {len(trap)} prompts" in message and "prompts_for" in message
    assert ex.n_prompts == len(trap)  # extracted, not refused
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        extract(loaded, prompts_for(loaded, n_per_k=3).prompts(), progress=False)
        extract(load_tiny("tiny-neox"), TEXTS, progress=False)
    assert not [w for w in seen if "unknown token" in str(w.message)]


# ----------------------------------------------------------------------------------------------
# Extraction: repr, named access


@pytest.mark.slow
def test_extraction_prints_short_and_reads_by_layer_and_name(load_tiny, tmp_path):
    loaded = load_tiny("tiny-neox")
    config = ExtractionConfig(layers=[1, 3], readouts=("values", "resid"), batch_size=2)
    ex = extract(loaded, TEXTS, config, progress=False)
    text = repr(ex)
    assert len(text.splitlines()) < 10 and "471" not in text
    assert "4 prompts" in text and "tiny-neox" in text and "layers 1, 3" in text and "in memory" in text
    assert f"values float32 [4, 2, {ex.values.shape[2]}, {ex.values.shape[3]}]" in text and "resid float32" in text
    for column, layer in enumerate(ex.layers):
        arrays = ex.layer(layer)
        assert sorted(arrays) == ["attn_entropy_bits", "n_visible_keys", "resid", "values"]
        for name, array in arrays.items():
            np.testing.assert_array_equal(array, ex[name][:, column], err_msg=name)
    np.testing.assert_array_equal(ex.layer(3)["values"], ex.values[:, 1])  # layer 3 is column 1
    assert ex.values is ex["values"] and ex.resid is ex["resid"] and ex.attn_entropy_bits is ex["attn_entropy_bits"]
    assert ex.next_entropy_bits.shape == (4,) and ex.n_tokens.shape == (4,)
    with pytest.raises(NotExtractedError) as error:
        ex.layer(2)
    assert "layer 2 was not extracted" in _one_line(error) and "layers 1, 3" in str(error.value)
    for name in ("z", "hidden", "token_probs"):
        with pytest.raises(NotExtractedError) as error:
            getattr(ex, name)
        assert f"no '{name}'" in _one_line(error) and "ExtractionConfig(" in str(error.value)
    with pytest.raises(KeyError) as missing:  # code that caught the KeyError of ex["..."] keeps working
        ex["z"]
    assert isinstance(missing.value, ConfigError)

    on_disk = extract(loaded, TEXTS, config, out_dir=tmp_path / "extraction", progress=False)
    assert f"memory-mapped from {tmp_path / 'extraction'}" in repr(on_disk)
    encoder = extract(load_tiny("tiny-bert"), TEXTS[:2], progress=False)
    with pytest.raises(NotExtractedError) as error:
        encoder.next_entropy_bits
    assert "encoder" in _one_line(error)


# ----------------------------------------------------------------------------------------------
# load_run, load_extraction, run's return, the device default


@pytest.mark.slow
def test_load_run_and_load_extraction_read_a_run(sula_run, load_tiny, tmp_path):
    from geomprobe import load_run

    results = load_run(sula_run)
    assert results.path == sula_run and results.status("sula") == "complete" and "sula" in results.suites
    rows = results.rows("sula", "main")
    assert [row["text"] for row in rows] == [r.text for r in prompts_for(load_tiny("windtunnel-sula"),
                                                                         **SUITE_SETTINGS)["main"]]
    ex = load_extraction(sula_run / "sula" / "extraction-main")
    assert ex.prompt_ids == [row["id"] for row in rows] and ex.directory == sula_run / "sula" / "extraction-main"
    assert ex.token_probs.shape == (len(rows), 2) and "memory-mapped" in repr(ex)
    with pytest.raises(RunDirectoryError) as error:
        load_extraction(sula_run / "sula")
    assert "extraction-main" in _one_line(error)
    with pytest.raises(RunDirectoryError) as error:
        load_run(tmp_path)
    _one_line(error)


def test_load_model_defaults_to_the_clis_device(load_tiny):
    import torch

    from geomprobe.config import RunConfig
    from geomprobe.models import load_model
    from geomprobe.runner import resolve_device

    assert inspect.signature(load_model).parameters["device"].default == RunConfig.__dataclass_fields__[
        "device"].default == "auto"
    assert load_tiny("tiny-neox").device == resolve_device("auto")
    if not torch.backends.mps.is_available():
        with pytest.raises(ConfigError) as error:
            load_model("tiny-neox", device="mps")
        assert "MPS" in _one_line(error)
