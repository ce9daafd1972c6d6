"""The project's prompt corpora (METHODS.md section 6): counts, uniqueness, spread, reproducibility."""

import importlib.util
import json
import re
from pathlib import Path

import pytest

from geomprobe.corpora import CORPORA, corpus_path, load_corpus
from geomprobe.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]


def _normalised(text):
    return re.sub(r"\s+", " ", text.lower()).strip()


@pytest.fixture(scope="module")
def corpora():
    return {name: load_corpus(name) for name in CORPORA}


def test_counts_per_source(corpora):
    mixed = corpora["mixed"]
    assert len(mixed) >= 1000
    for source in ("encyclopedia", "news", "fiction", "code", "qa"):
        assert sum(p.source == source for p in mixed) >= 200, source
    for name in ("math", "code", "philosophy"):
        assert len(corpora[name]) >= 200 and {p.domain for p in corpora[name]} == {name}


def test_ids_and_texts_unique_across_files(corpora):
    ids = [p.id for prompts in corpora.values() for p in prompts]
    assert len(ids) == len(set(ids))
    texts = [_normalised(p.text) for prompts in corpora.values() for p in prompts]
    assert len(texts) == len(set(texts))
    for prompts in corpora.values():
        for p in prompts:
            assert p.text == p.text.strip() and p.text, p.id
            assert p.text.isascii(), p.id


def test_lengths_are_spread(corpora):
    for name, prompts in corpora.items():
        words = [len(p.text.split()) for p in prompts]
        short = sum(w < 25 for w in words) / len(words)
        long = sum(w > 60 for w in words) / len(words)
        assert short >= 0.15 and long >= 0.15, (name, short, long)


@pytest.mark.slow
def test_build_script_reproduces_the_files(tmp_path):
    spec = importlib.util.spec_from_file_location("build_corpora", ROOT / "prompts" / "build_corpora.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(tmp_path)
    for name in CORPORA:
        assert (tmp_path / f"{name}.jsonl").read_bytes() == corpus_path(name).read_bytes(), name
        first = json.loads((tmp_path / f"{name}.jsonl").read_text().splitlines()[0])
        assert set(first) == {"id", "domain", "source", "text"}


def test_corpus_data_files_are_readable():
    """prompts/fragments/ is ASCII JSON(L); every snippet in prompts/snippets/ carries a cut marker."""
    for path in sorted((ROOT / "prompts" / "fragments").iterdir()):
        text = path.read_text(encoding="utf-8")
        assert text.isascii(), path.name
        if path.suffix == ".jsonl":
            assert all(isinstance(json.loads(line), dict) for line in text.splitlines()), path.name
        else:
            assert path.suffix == ".json" and isinstance(json.loads(text), dict), path.name
    for folder in ("code", "code_restricted"):
        snippets = sorted((ROOT / "prompts" / "snippets" / folder).iterdir())
        assert snippets, folder
        for path in snippets:
            text = path.read_text(encoding="utf-8")
            assert text.isascii() and re.search(r"@@[CMO]", text), f"{folder}/{path.name}"


def test_unknown_corpus_is_a_one_line_error(tmp_path):
    with pytest.raises(ConfigError, match="unknown corpus 'maths'.*mixed, math, code, philosophy"):
        corpus_path("maths")
    own = tmp_path / "mine.txt"
    own.write_text("first prompt\nsecond prompt\n")
    assert [p.text for p in load_corpus(str(own))] == ["first prompt", "second prompt"]
