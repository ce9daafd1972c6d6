"""Where the composers find their text: prompts/fragments/*.json(l) and prompts/snippets/."""

from __future__ import annotations

import json
from pathlib import Path

PROMPTS = Path(__file__).resolve().parents[1]
FRAGMENTS = PROMPTS / "fragments"
SNIPPETS = PROMPTS / "snippets"


def load(name: str):
    """prompts/fragments/<name> parsed: a .json file whole, a .jsonl file as the list of its records."""
    path = FRAGMENTS / name
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return json.loads(text)


def snippets(folder: str) -> list[str]:
    """The snippet files of prompts/snippets/<folder>/, in file-name order, outer blank lines removed."""
    return [p.read_text(encoding="utf-8").strip("\n") for p in sorted((SNIPPETS / folder).iterdir())
            if p.is_file() and not p.name.startswith(".")]
