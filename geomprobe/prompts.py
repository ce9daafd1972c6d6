"""Prompt files: JSONL records {"id", "domain", "source", "text"} or plain text (one prompt a line).

Bad input names its line: `prompts.jsonl line 7: missing "text"`.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path

from geomprobe.errors import PromptFileError

REQUIRED = ("id", "text")


@dataclass(frozen=True)
class Prompt:
    id: str
    text: str
    domain: str = ""
    source: str = ""

    def to_dict(self) -> dict:
        return asdict(self)


def read_prompts(path: str | Path) -> list[Prompt]:
    """Read a .jsonl prompt file (every line a record) or any other file as plain text (every
    non-empty line a prompt, ids `line-N`). Raises PromptFileError naming the bad line."""
    path = Path(path)
    if not path.is_file():
        raise PromptFileError(f"prompt file {path} does not exist")
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as err:
        raise PromptFileError(f"{path}: not UTF-8 text ({err.reason} at byte {err.start})") from None
    prompts: list[Prompt] = []
    seen: dict[str, int] = {}
    jsonl = path.suffix == ".jsonl"
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path} line {number}"
        if jsonl:
            try:
                record = json.loads(line)
            except json.JSONDecodeError as err:
                raise PromptFileError(f"{where}: not valid JSON ({err.msg} at column {err.colno})") from None
            if not isinstance(record, dict):
                raise PromptFileError(f'{where}: expected a JSON object with "id" and "text"')
            for key in REQUIRED:
                if key not in record:
                    raise PromptFileError(f'{where}: missing "{key}"')
            if not isinstance(record["text"], str) or not record["text"].strip():
                raise PromptFileError(f'{where}: "text" must be a non-empty string')
            prompt = Prompt(str(record["id"]), record["text"], str(record.get("domain", "")),
                            str(record.get("source", "")))
        else:
            prompt = Prompt(f"line-{number}", line)
        if prompt.id in seen:
            raise PromptFileError(f'{where}: duplicate id "{prompt.id}" (first on line {seen[prompt.id]})')
        seen[prompt.id] = number
        prompts.append(prompt)
    if not prompts:
        raise PromptFileError(f"{path}: no prompts found")
    return prompts


def prompts_hash(prompts: list[Prompt]) -> str:
    blob = json.dumps([p.to_dict() for p in prompts], sort_keys=True).encode()
    return hashlib.sha256(blob).hexdigest()


def write_prompts(prompts: list[Prompt], path: Path) -> None:
    from geomprobe.rundir import atomic_write_text

    atomic_write_text(path, "".join(json.dumps(p.to_dict()) + "\n" for p in prompts))
