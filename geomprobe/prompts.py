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
    """One prompt: a unique id, its text, and optionally the domain and source it was drawn from."""

    id: str
    text: str
    domain: str = ""
    source: str = ""

    def to_dict(self) -> dict:
        """The prompt as a JSONL record: id, text, domain, source."""
        return asdict(self)


def read_prompts(path: str | Path) -> list[Prompt]:
    """Read a JSON-lines prompt file (every line a record: .jsonl or .json, or a file whose first
    line is a record with "text") or any other file as plain text (every non-empty line a prompt,
    ids `line-N`). A UTF-8 byte-order mark is dropped. Read through geomprobe.files (a regular file
    of at most 1 GiB, strict UTF-8, each record at most 8 deep, no NaN, no lone surrogate) and each
    record checked against geomprobe.schemas.PromptRecord. Raises PromptFileError naming the bad line."""
    from geomprobe.files import decode, loads, read_bytes, scan
    from geomprobe.readers import PROMPTS

    path = Path(path)
    if path.is_dir():
        raise PromptFileError(f"--prompts {path} is a directory: give a prompt file (.jsonl records or plain text)")
    if not path.exists() and not path.is_symlink():
        raise PromptFileError(f"prompt file {path} does not exist")
    text = decode(read_bytes(path, PROMPTS, label=f"prompt file {path}"), path, PROMPTS, "save the file as UTF-8")
    # lines end at \n (\r\n and a lone \r too) only: str.splitlines also breaks at U+2028, NEL, form
    # feed and other separators, which JSON strings and prompt text may hold
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    numbered = [(number, line) for number, line in enumerate(lines, start=1) if line.strip()]
    if is_jsonl(path, lines):
        scanned = scan(text)
        records = [loads(line, path, PROMPTS, "", line=number, scanned=scanned) for number, line in numbered]
        _check_records(records, [number for number, _ in numbered], path)
        prompts = [Prompt(str(record["id"]), record["text"], _text(record.get("domain", "")),
                          _text(record.get("source", ""))) for record in records]
    else:
        prompts = [Prompt(f"line-{number}", line) for number, line in numbered]
    seen: dict[str, int] = {}
    for (number, _), prompt in zip(numbered, prompts):
        if prompt.id in seen:
            raise PromptFileError(f'{path} line {number}: duplicate id "{prompt.id}" (first on line {seen[prompt.id]})')
        seen[prompt.id] = number
    if not prompts:
        raise PromptFileError(f"{path}: no prompts found")
    return prompts


def _check_records(records: list, numbers: list[int], path: Path) -> None:
    """Every record checked against geomprobe.schemas.PromptRecord at once; the first bad one is a
    PromptFileError naming its line."""
    from pydantic import TypeAdapter, ValidationError

    from geomprobe.files import SchemaMismatch
    from geomprobe.readers import PROMPTS
    from geomprobe.schemas import PromptRecord

    if all(_plain_record(record) for record in records):  # what PromptRecord accepts, checked fast
        return
    try:
        TypeAdapter(list[PromptRecord]).validate_python(records)
    except ValidationError as error:
        problems = error.errors(include_url=False)
        first = min(problems, key=lambda p: (p["loc"][0], p["loc"][1:2] != ("id",)))
        index, field = first["loc"][0], (first["loc"][1] if len(first["loc"]) > 1 else None)
        if field is None:
            words = 'expected a JSON object with "id" and "text"'
        elif first["type"] == "missing":
            words = f'missing "{field}"'
        elif field == "text":
            words = '"text" must be a non-empty string'
        else:
            words = f'"id" must be a string or a whole number, not {type(records[index].get("id")).__name__}'
        raise PROMPTS.fail(SchemaMismatch, f"{path} line {numbers[index]}:", words, "") from None


def _plain_record(record) -> bool:
    """What geomprobe.schemas.PromptRecord accepts, as one fast test (a test keeps the two the same)."""
    if type(record) is not dict:
        return False
    text, identifier = record.get("text"), record.get("id")
    return type(text) is str and bool(text.strip()) and type(identifier) in (str, int)


def _text(value) -> str:
    return value if isinstance(value, str) else str(value)


def prompts_from(values) -> tuple[dict, ...]:
    """Prompts given in Python (RunConfig(prompts=[...])) as JSON-ready records {"id", "text",
    "domain", "source"}: each value a string, a record with "text" (and optionally "id", "domain",
    "source"), or a Prompt. Ids default to `prompt-N` (N from 1, in order). Raises PromptFileError
    naming the bad entry: not text or a record, empty text, text that is not valid Unicode (a
    lone surrogate), a duplicate id, no prompts at all."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise PromptFileError(f"prompts: give a file path or a list of strings or records, not {type(values).__name__}")
    records, seen = [], {}
    for number, value in enumerate(values, start=1):
        where = f"prompts[{number - 1}]"
        if isinstance(value, Prompt):
            value = value.to_dict()
        if isinstance(value, str):
            value = {"text": value}
        if not isinstance(value, dict):
            raise PromptFileError(f'{where}: expected a string or a record with "text", not {type(value).__name__}')
        unknown = sorted(set(value) - {"id", "text", "domain", "source"})
        if unknown:
            raise PromptFileError(f"{where}: unknown key {unknown[0]!r}: a prompt record has id, text, domain, source")
        text = value.get("text")
        if not isinstance(text, str) or not text.strip():
            raise PromptFileError(f'{where}: "text" must be a non-empty string')
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as error:
            raise PromptFileError(f"{where}: the text is not valid Unicode ({error.reason} at character "
                                  f"{error.start}): remove the lone surrogate") from None
        record = {"id": str(value.get("id", f"prompt-{number}")), "text": text,
                  "domain": str(value.get("domain", "")), "source": str(value.get("source", ""))}
        if record["id"] in seen:
            raise PromptFileError(f'{where}: duplicate id "{record["id"]}" (first at prompts[{seen[record["id"]]}])')
        seen[record["id"]] = number - 1
        records.append(record)
    if not records:
        raise PromptFileError("prompts: the list is empty: give at least one prompt (or leave prompts out)")
    return tuple(records)


def given_prompts(source) -> list[Prompt] | None:
    """RunConfig.prompts as Prompt objects: None when not given, a file read (read_prompts), or the
    records given in Python (prompts_from)."""
    if not source:
        return None
    if isinstance(source, (str, Path)):
        return read_prompts(source)
    return [Prompt(**record) for record in prompts_from(source)]


def prompts_label(source) -> str:
    """How a run names RunConfig.prompts in its records: the file's path, or the prompts given in
    Python with their count and hash."""
    if isinstance(source, (str, Path)):
        return str(source)
    given = given_prompts(source)
    return f"{len(given)} prompts given in Python (sha256 {prompts_hash(given)[:12]})"


def is_jsonl(path: Path, lines: list[str]) -> bool:
    """JSON records: a .jsonl or .json file (any case), or any file whose first non-empty line is a
    JSON object; every other file is plain text, one prompt a line."""
    if path.suffix.lower() in (".jsonl", ".json", ".ndjson"):
        return True
    first = next((line.strip() for line in lines if line.strip()), "")
    if first.startswith("{") and first.endswith("}"):
        from geomprobe.errors import GeomprobeError
        from geomprobe.files import loads
        from geomprobe.readers import PROMPTS

        try:
            record = loads(first, path, PROMPTS, "", line=1)
        except GeomprobeError:  # a record that cannot be read: a JSON-lines file, refused at that line
            return first.startswith('{"')
        return isinstance(record, dict) and "text" in record
    return False


def prompts_hash(prompts: list[Prompt]) -> str:
    """sha256 of the prompts as one sorted-key JSON list, streamed prompt by prompt (the same digest
    as hashing json.dumps of the whole list, without holding its text: 38 MB at 100,000 prompts)."""
    digest = hashlib.sha256(b"[")
    for i, prompt in enumerate(prompts):
        digest.update(((", " if i else "") + json.dumps(prompt.to_dict(), sort_keys=True)).encode())
    digest.update(b"]")
    return digest.hexdigest()


def write_prompts(prompts: list[Prompt], path: Path) -> None:
    from geomprobe.rundir import atomic_write_text

    atomic_write_text(path, "".join(json.dumps(p.to_dict()) + "\n" for p in prompts))
