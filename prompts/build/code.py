"""Code prompts: the "code" source of the mixed corpus and the Python-only "code_restricted" set.

Every snippet was written for this project. They live one a file in prompts/snippets/code/
(mixed languages) and prompts/snippets/code_restricted/ (Python only), read in file-name order.
Each snippet carries cut markers ``@@C`` / ``@@M`` / ``@@O``; every marker yields one prompt,
namely the snippet text up to that marker (other markers removed, trailing whitespace stripped).
The letter records how constrained the next token is at that point: C nearly certain, M medium,
O wide open. Output is deterministic (fixed-seed ``random.Random`` shuffle, stdlib only).
"""

from __future__ import annotations

import random
import re

from .data import snippets

SEED_CODE = 20240611
SEED_RESTRICTED = 20240612

MIN_LINES = 3
MAX_LINES = 40

_MARK = re.compile(r"@@([CMO])")


def _cuts(snippet: str) -> list[tuple[str, str]]:
    """(kind, prefix) for every marker in ``snippet``."""
    out = []
    for m in _MARK.finditer(snippet):
        prefix = _MARK.sub("", snippet[: m.start()]).rstrip()
        out.append((m.group(1), prefix.lstrip("\n")))
    return out


def _normalised(text: str) -> str:
    return re.sub(r"\s+", " ", text.lower()).strip()


def _build(snippet_texts: list[str], source: str, seed: int, exclude: set[str]) -> list[dict]:
    seen = set(exclude)
    texts = []
    for snippet in snippet_texts:
        for _kind, text in _cuts(snippet):
            key = _normalised(text)
            if not MIN_LINES <= text.count("\n") + 1 <= MAX_LINES or key in seen:
                continue
            seen.add(key)
            texts.append(text)
    rng = random.Random(seed)
    rng.shuffle(texts)
    return [{"source": source, "text": t} for t in texts]


def generate() -> list[dict]:
    code = _build(snippets("code"), "code", SEED_CODE, set())
    restricted = _build(snippets("code_restricted"), "code_restricted", SEED_RESTRICTED,
                        {_normalised(r["text"]) for r in code})
    return code + restricted
