"""Regenerate the project's prompt corpora (METHODS.md section 6) from prompts/fragments/ and snippets/.

    .venv/bin/python prompts/build_corpora.py          # writes geomprobe/data/corpora/{mixed,math,code,philosophy}.jsonl
    .venv/bin/python prompts/build_corpora.py OUT_DIR  # writes them to OUT_DIR instead

Every text is written by this project: the fragments, sentence frames and word lists in
prompts/fragments/*.json(l) and the code snippets in prompts/snippets/ are composed into prompts
by the modules in prompts/build/, deterministically (fixed seeds, stdlib only), so this script
reproduces the committed files byte for byte (a test checks it). The corpora are package data
(geomprobe/data/corpora/, read by geomprobe.corpora), so an installed wheel carries them.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPORA_DIR = HERE.parent / "geomprobe" / "data" / "corpora"  # = geomprobe.corpora.corpora_dir()
sys.path.insert(0, str(HERE))

from build import code, encyclopedia_news, fiction_qa, math_philosophy  # noqa: E402

MIXED_SOURCES = ("encyclopedia", "news", "fiction", "code", "qa")
# restricted corpus name -> the generator's source name
RESTRICTED = {"math": "math", "code": "code_restricted", "philosophy": "philosophy"}
MIN_WORDS = 5  # shorter fragments ("Objection:") are dropped: a prompt should be ~15 tokens or more


def normalised(text: str) -> str:
    return re.sub(r"\s+", " ", text.lower()).strip()


def corpora() -> dict[str, list[dict]]:
    """name -> records {"id", "domain", "source", "text"}; raises if a text repeats anywhere."""
    by_source: dict[str, list[str]] = {}
    for module in (encyclopedia_news, fiction_qa, code, math_philosophy):
        for record in module.generate():
            if len(record["text"].split()) >= MIN_WORDS:
                by_source.setdefault(record["source"], []).append(record["text"])
    out: dict[str, list[dict]] = {"mixed": []}
    for source in MIXED_SOURCES:
        for i, text in enumerate(by_source[source], 1):
            out["mixed"].append({"id": f"mixed-{source}-{i:04d}", "domain": "mixed", "source": source, "text": text})
    for name, source in RESTRICTED.items():
        out[name] = [{"id": f"{name}-{i:04d}", "domain": name, "source": name, "text": text}
                     for i, text in enumerate(by_source[source], 1)]
    seen: dict[str, str] = {}
    for records in out.values():
        for record in records:
            key = normalised(record["text"])
            if key in seen:
                raise ValueError(f"duplicate text: {record['id']} repeats {seen[key]}")
            seen[key] = record["id"]
    return out


def main(out_dir: Path = CORPORA_DIR) -> None:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, records in corpora().items():
        text = "".join(json.dumps(record, ensure_ascii=True) + "\n" for record in records)
        (out_dir / f"{name}.jsonl").write_text(text)
        print(f"{name}: {len(records)} prompts -> {out_dir / f'{name}.jsonl'}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else CORPORA_DIR)
