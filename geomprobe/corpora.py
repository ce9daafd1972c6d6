"""The project's prompt corpora (METHODS.md section 6): package data, geomprobe/data/corpora/<name>.jsonl.

    from geomprobe.corpora import load_corpus
    mixed = load_corpus("mixed")      # 1,000+ prompts from five sources

They ship inside the package (wheel included), so an installed geomprobe needs no checkout.
prompts/build_corpora.py regenerates them from prompts/fragments/ and prompts/snippets/.
"""

from __future__ import annotations

from pathlib import Path

from geomprobe.errors import ConfigError

CORPORA = {
    "mixed": "mixed-domain candidates: encyclopedia, news, fiction, code, qa",
    "math": "domain-restricted: mathematics",
    "code": "domain-restricted: Python code",
    "philosophy": "domain-restricted: philosophy",
}


def corpora_dir() -> Path:
    """Where the built-in corpora live: the package's data/corpora/ folder."""
    return Path(__file__).resolve().parent / "data" / "corpora"


def corpus_path(name: str) -> Path:
    """Path of a built-in corpus; a path to an existing file is returned as is."""
    if name not in CORPORA:
        if Path(name).is_file():
            return Path(name)
        raise ConfigError(f"unknown corpus '{name}': choose one of {', '.join(CORPORA)}, or give a prompt file")
    path = corpora_dir() / f"{name}.jsonl"
    if not path.exists():
        raise ConfigError(f"corpus '{name}' is missing ({path}): reinstall geomprobe, or regenerate it with "
                          "`python prompts/build_corpora.py` from a geomprobe checkout")
    return path


def load_corpus(name: str):
    from geomprobe.prompts import read_prompts

    return read_prompts(corpus_path(name))
