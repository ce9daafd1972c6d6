"""Prompt generator for the "encyclopedia" and "news" sources.

All text is original and lives in prompts/fragments/: encyclopedia.json restates well-known
facts in our own words; news.json holds wire-style stories about invented towns, councils,
companies and people (slots.json), so nothing describes a real event.

Templates use a tiny markup:

* ``{a|b|c}``  -- pick one alternative (innermost first, so nesting works);
  ``{@k:a|b|c}`` groups sharing the key ``k`` all take the same position;
* ``[SLOT]``   -- a per-instance value (towns, people, companies, days ...);
  the same slot name gives the same value throughout one instance;
* ``[#lo-hi]`` -- a random integer in ``lo..hi``;
* ``<c>``, ``<m>``, ``<o>`` -- a place where a prompt may be cut, marking the
  expected next-token uncertainty: near-certain, medium, wide open.

Each template is expanded ``n`` times; for each expansion one cut is chosen so
that the source as a whole balances ending types (about a third each) and
lengths (short < 25 words, long > 60 words).  Only ``random.Random(SEED)`` is
used, so ``generate()`` is deterministic.
"""

from __future__ import annotations

import random
import re

from .data import load

SEED = 41207

_ALT = re.compile(r"\{([^{}]*)\}")
_NUM = re.compile(r"\[#(\d+)-(\d+)\]")
_SLOT = re.compile(r"\[([A-Z][A-Z0-9_]*)\]")
_MARK = re.compile(r"<([cmo])>")

_VOCAB = load("slots.json")
_TOWNS = [h + t for h in _VOCAB["town_heads"] for t in _VOCAB["town_tails"]]
_DAYS = load("common.json")["days"]
_WEEKDAYS = _DAYS[:5]


def _slots(rng: random.Random) -> dict:
    towns = rng.sample(_TOWNS, 3)
    female = rng.random() < 0.5
    firsts = rng.sample(_VOCAB["first_names_female"], 2) + rng.sample(_VOCAB["first_names_male"], 2)
    if not female:
        firsts = firsts[2:] + firsts[:2]
    firsts = [firsts[0], firsts[2], firsts[1]]
    lasts = rng.sample(_VOCAB["last_names"], 3)
    cos = rng.sample(_VOCAB["companies"], 2)
    return {
        "TOWN": towns[0], "TOWN2": towns[1], "TOWN3": towns[2],
        "TOWNU": towns[0].upper(),
        "PERSON": f"{firsts[0]} {lasts[0]}", "PERSON_L": lasts[0],
        "HE": "she" if female else "he", "HIS": "her" if female else "his",
        "HEC": "She" if female else "He", "HISC": "Her" if female else "His",
        "WMN": "women's" if female else "men's",
        "HE2": "he" if female else "she", "HIS2": "his" if female else "her",
        "PERSON2": f"{firsts[1]} {lasts[1]}", "PERSON2_L": lasts[1],
        "PERSON3": f"{firsts[2]} {lasts[2]}", "PERSON3_L": lasts[2],
        "CO": cos[0], "CO2": cos[1],
        "RIVER": rng.choice(_VOCAB["rivers"]),
        "DAY": rng.choice(_WEEKDAYS), "DAY2": rng.choice(_DAYS),
        "MONTH": rng.choice(_VOCAB["months"]),
        "REGION": rng.choice(_VOCAB["regions"]),
    }


def _expand(template: str, rng: random.Random) -> str:
    text = template
    linked: dict[str, int] = {}
    while True:
        m = _ALT.search(text)
        if not m:
            break
        body = m.group(1)
        key = None
        if body.startswith("@"):
            key, body = body[1:].split(":", 1)
        options = body.split("|")
        if key is None:
            choice = rng.choice(options)
        else:
            if key not in linked:
                linked[key] = rng.randrange(len(options))
            choice = options[linked[key] % len(options)]
        text = text[: m.start()] + choice + text[m.end():]
    text = _NUM.sub(lambda m: str(rng.randint(int(m.group(1)), int(m.group(2)))), text)
    values = _slots(rng)
    text = _SLOT.sub(lambda m: values[m.group(1)], text)
    return text


def _cuts(text: str) -> list[tuple[int, str, str]]:
    """All (marker index, category, prompt) cuts of an expanded template."""
    out = []
    for idx, m in enumerate(_MARK.finditer(text)):
        prefix = _MARK.sub("", text[: m.start()]).rstrip()
        prefix = re.sub(r"[ \t]+", " ", prefix).strip()
        prefix = re.sub(r" +\n", "\n", prefix)
        if len(prefix.split()) >= 7:
            out.append((idx, m.group(1), prefix))
    return out


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def _bucket(text: str) -> str:
    n = len(text.split())
    return "s" if n < 25 else ("l" if n > 60 else "m")


_CAT_TARGET = {"c": 1 / 3, "m": 1 / 3, "o": 1 / 3}
_LEN_TARGET = {"s": 0.28, "m": 0.34, "l": 0.38}
STATS: dict[str, dict] = {}


def _build(source: str, templates: list[tuple[int, str]], seed: int) -> list[dict]:
    rng = random.Random(seed)
    seen: set[str] = set()
    cat_n = {"c": 0, "m": 0, "o": 0}
    len_n = {"s": 0, "m": 0, "l": 0}
    total = 0
    records = []
    for n, template in templates:
        used_idx: dict[int, int] = {}
        for _ in range(n):
            for _attempt in range(8):
                options = [
                    (idx, cat, p) for idx, cat, p in _cuts(_expand(template, rng))
                    if _norm(p) not in seen
                ]
                if options:
                    break
            else:
                continue

            def score(opt):
                idx, cat, p = opt
                b = _bucket(p)
                return (_CAT_TARGET[cat] * (total + 1) - cat_n[cat]
                        + _LEN_TARGET[b] * (total + 1) - len_n[b]
                        - 4.0 * used_idx.get(idx, 0))

            scored = [(score(o) + rng.random() * 0.25, i) for i, o in enumerate(options)]
            idx, cat, prompt = options[max(scored)[1]]
            used_idx[idx] = used_idx.get(idx, 0) + 1
            seen.add(_norm(prompt))
            cat_n[cat] += 1
            len_n[_bucket(prompt)] += 1
            total += 1
            records.append({"source": source, "text": prompt})
    STATS[source] = {"endings": dict(cat_n), "lengths": dict(len_n)}
    return records


def _templates(name: str) -> list[tuple[int, str]]:
    """(instances, template) for every template of fragments/<name>.json, in file order."""
    out = []
    for part in load(f"{name}.json")["parts"]:
        for entry in part["templates"]:
            out.append((part["instances"], entry) if isinstance(entry, str) else tuple(entry))
    return out


def generate() -> list[dict]:
    return (_build("encyclopedia", _templates("encyclopedia"), SEED)
            + _build("news", _templates("news"), SEED + 1))
