"""Prompt generator for the "fiction" and "qa" sources.

All text is original and lives in prompts/fragments/. Fiction prompts (fiction.json) are short
passages composed from genre-specific fragments (mystery, fantasy, romance, science fiction,
literary, children's, plus a few horror/adventure pieces) arranged by many different frames:
plain narration, dialogue exchanges, chapter openings, diaries, letters, captain's logs, case
notes, fairy-tale openings and so on. Sentences are written in the past tense with pronoun
slots so the same fragment can be rendered in first or third person.

QA prompts are built from a hand-written bank of general-knowledge facts (qa_facts.jsonl:
science, history, geography, language, arts, everyday knowledge), each with a question, a short
answer, a declarative statement, distractors and a short explanation in our own words, rendered
through many question-answer formats.

Every frame declares the expected next-token uncertainty of its ending ("c" near-certain, "m"
medium, "o" wide open); generation rotates through the three classes so each source has roughly
a third of each. Only ``random.Random(SEED)`` is used, so ``generate()`` is deterministic; the
frames below make their random draws in a fixed order, which is part of the output.
"""

from __future__ import annotations

import random
import re
from typing import NamedTuple

from .data import load

SEED = 90517
TARGET = 240  # per source; the brief asks for at least 230

_WS = re.compile(r"\s+")


def _norm(text: str) -> str:
    return _WS.sub(" ", text.strip().lower())


def _words(text: str) -> int:
    return len(text.split())


def _clean(text: str) -> str:
    # collapse spaces inside lines, keep newlines, strip ends
    lines = [re.sub(r"[ \t]+", " ", ln).strip() for ln in text.split("\n")]
    out = "\n".join(lines).strip()
    out = re.sub(r"\n{3,}", "\n\n", out)
    return out


# ===========================================================================
# FICTION: fragments, word lists and the frame rotation come from fiction.json
# ===========================================================================

FIC = load("fiction.json")
GENRES: dict[str, dict] = FIC["genres"]
DAYS = load("common.json")["days"]

_SLOT = re.compile(r"\{([A-Za-z])\}")


def _cap(t: str) -> str:
    return t[:1].upper() + t[1:] if t else t


class _Ctx:
    """One story's cast, place and narrative person."""

    def __init__(self, rng: random.Random, genre: str, first: bool | None = None):
        g = GENRES[genre]
        self.rng, self.g, self.genre = rng, g, genre
        self.name, sex = rng.choice(g["heroes"])
        self.first = (rng.random() < 0.35) if first is None else first
        x, y = rng.sample(g["others"], 2)
        if self.first:
            v = dict(N="I", S="I", s="I", o="me", p="my", P="My", r="myself")
        else:
            f = sex == "f"
            v = dict(N=self.name, S="She" if f else "He", s="she" if f else "he",
                     o="her" if f else "him", p="her" if f else "his",
                     P="Her" if f else "His", r="herself" if f else "himself")
        v.update(X=x, Y=y, L=rng.choice(g["places"]))
        self.v = v
        self.used: set[str] = set()
        self.named = False

    def fill(self, t: str) -> str:
        def rep(m):
            key = m.group(1)
            val = self.v[key]
            if key == "N" and not self.first:
                if self.named and self.rng.random() < 0.65:
                    val = self.v["s"]
                self.named = True
            a = m.start()
            pre = t[max(0, a - 2):a]
            if a == 0 or pre in (". ", "? ", "! ", ": ") or t[a - 1] == "\n" or \
                    (t[a - 1] == '"' and (a == 1 or t[a - 2] in " \n")):
                val = _cap(val)
            return val
        return _SLOT.sub(rep, t)

    def pick(self, key: str, pool: list[str] | None = None) -> str:
        pool = pool if pool is not None else self.g[key]
        fresh = [x for x in pool if x not in self.used] or pool
        t = self.rng.choice(fresh)
        self.used.add(t)
        return t

    def quote(self, line: str | None = None, who: str | None = None, tag_first: bool = False) -> str:
        rng = self.rng
        line = self.fill(line if line is not None else self.pick("say"))
        who = who if who is not None else rng.choice(["{X}", "{X}", "{N}", "{Y}"])
        who = self.fill("-" + who)[1:]  # no sentence-initial capital after the quote
        if line.endswith("?"):
            verb = rng.choice(["asked", "asked", "said", "whispered"])
        else:
            verb = rng.choice(FIC["say_verbs"])
        if tag_first:
            end = "" if line[-1] in "?!" else "."
            return f'{_cap(who)} {verb}, "{line}{end}"'
        if line[-1] in "?!":
            return f'"{line}" {who} {verb}.'
        return f'"{line}," {who} {verb}.'

    def body(self, k: int, kinds: tuple[str, ...] = ("desc", "act", "act", "say")) -> list[str]:
        out = []
        for _ in range(k):
            kind = self.rng.choice(kinds)
            out.append(self.quote() if kind == "say" else self.fill(self.pick(kind)))
        return out

    def ending(self, cls: str, allow_stop: bool = True) -> str:
        rng = self.rng
        if cls == "o" and allow_stop and rng.random() < 0.35:
            return ""  # the passage ends after a full stop
        pool = self.g[cls] if rng.random() < 0.55 else FIC["endings"][cls]
        return self.fill(self.pick(cls, pool))


def _para(*parts) -> str:
    flat = []
    for p in parts:
        if isinstance(p, (list, tuple)):
            flat.extend(x for x in p if x)
        elif p:
            flat.append(p)
    return " ".join(flat)


def _k(rng: random.Random, size: str) -> int:
    return {"s": 0, "m": rng.choice([2, 3]), "l": rng.choice([4, 5, 6])}[size]


# ---------------------------------------------------------------------------
# Fiction frames: f(ctx, cls, size) -> text
# ---------------------------------------------------------------------------

def _fr_narration(c, cls, size):
    return _para(c.fill(c.pick("open")), c.body(_k(c.rng, size)), c.ending(cls))


def _fr_two_paragraphs(c, cls, size):
    k = _k(c.rng, size)
    p1 = _para(c.fill(c.pick("open")), c.body(max(1, k // 2), ("desc",)))
    p2 = _para(c.body(max(1, k - k // 2), ("act", "say")), c.ending(cls))
    return p1 + "\n\n" + p2


def _fr_dialogue(c, cls, size):
    n = {"s": 1, "m": 2, "l": 4}[size]
    lines = []
    for i in range(n):
        who = "{X}" if i % 2 == 0 else "{N}"
        lines.append(c.quote(who=who, tag_first=c.rng.random() < 0.25))
        if size == "l" and i == 1:
            lines.append(c.fill(c.pick("act")))
    return _para(lines, c.ending(cls))


def _fr_dialogue_first(c, cls, size):
    return _para(c.quote(tag_first=False), c.body(_k(c.rng, size), ("desc", "act")), c.ending(cls))


def _fr_chapter_number(c, cls, size):
    head = "Chapter " + c.rng.choice(FIC["number_words"])
    return head + "\n\n" + _para(c.fill(c.pick("open")), c.body(_k(c.rng, size)), c.ending(cls))


def _fr_chapter_title(c, cls, size):
    n = c.rng.randint(2, 31)
    head = c.rng.choice([f"Chapter {n}: {c.pick('titles')}", f"{n}. {c.pick('titles')}",
                         f"CHAPTER {n}\n{c.pick('titles')}"])
    return head + "\n\n" + _para(c.body(max(1, _k(c.rng, size))), c.ending(cls))


def _fr_book_opening(c, cls, size):
    head = f"{c.pick('titles')}\n\nby {c.rng.choice(FIC['authors'])}"
    if c.rng.random() < 0.5:
        head += "\n\nChapter One"
    return head + "\n\n" + _para(c.fill(c.pick("open")), c.body(_k(c.rng, size)), c.ending(cls))


def _fr_prologue(c, cls, size):
    return "Prologue\n\n" + _para(c.fill(c.pick("open")), c.body(_k(c.rng, size), ("desc", "desc", "act")),
                                  c.ending(cls))


def _fr_diary(c, cls, size):
    head = f"{c.rng.choice(DAYS)}, {c.rng.randint(1, 28)} {c.rng.choice(FIC['months'])}\n\nDear Diary,"
    return head + "\n\n" + _para(c.rng.choice(FIC["diary_openings"]), c.body(_k(c.rng, size)), c.ending(cls))


def _fr_letter(c, cls, size):
    proper = [x for x in c.g["others"] if x[:1].isupper()]
    head = f"Dear {c.rng.choice(proper)}," if proper else "Dear friend,"
    if cls == "o" and c.rng.random() < 0.4:
        tail = c.rng.choice(["Yours,", "With love, always,", "I remain, as ever, your friend,"])
        return head + "\n\n" + _para(c.fill(c.rng.choice(FIC["letter_openings"])), c.body(_k(c.rng, size))) + "\n\n" + tail
    return head + "\n\n" + _para(c.fill(c.rng.choice(FIC["letter_openings"])), c.body(_k(c.rng, size)), c.ending(cls))


def _fr_scene_break(c, cls, size):
    k = max(2, _k(c.rng, size))
    p1 = _para(c.body(k // 2 + 1))
    p2 = _para(c.body(k - k // 2 - 1, ("desc", "act")), c.ending(cls, allow_stop=False))
    return p1 + "\n\n* * *\n\n" + p2


def _fr_time_header(c, cls, size):
    if c.rng.random() < 0.5:
        head = c.rng.choice(FIC["time_headers"])
    else:
        head = f"{_cap(c.v['L'])}, {c.rng.choice(['autumn', 'winter', 'spring', 'summer'])}"
    return head + "\n\n" + _para(c.body(max(1, _k(c.rng, size))), c.ending(cls))


def _fr_bedtime_story(c, cls, size):
    rng = c.rng
    teller, kid = rng.choice(FIC["tellers"]), rng.choice(FIC["listeners"])
    lead = [c.fill(c.pick("desc"))] if size != "s" else []
    ask = f'"Tell me a story," said {kid}.'
    if size == "l":
        ask += f' "A real one, not one from a book." {_cap(teller)} laughed and pulled the blanket up to {kid}\'s chin.'
    mid = f"{_cap(teller)} settled into the chair by the bed and began:"
    if cls == "c":
        end = '"Once upon a'
    elif cls == "m":
        end = rng.choice(['"Once upon a time, in a land far away, there lived a',
                          '"Long ago, before the roads were built, there was a',
                          '"There was once a girl who could'])
    else:
        return _para(lead, ask, mid) if rng.random() < 0.5 else _para(lead, ask, mid, '"')
    return _para(lead, ask, mid, end)


def _fr_in_media_res(c, cls, size):
    parts = [c.quote(), c.fill(c.pick("act"))]
    if size != "s":
        parts += c.body(_k(c.rng, size) - 1)
    return _para(parts, c.ending(cls))


def _fr_writing_prompt(c, cls, size):
    label = c.g["label"]
    art = "an" if label[0] in "aeiou" else "a"
    head = (f"Writing prompt: Write {art} {label} story set in {c.v['L']}."
            f"\n\n{c.rng.choice(['Story:', 'Response:', 'My attempt:'])}")
    return head + "\n\n" + _para(c.fill(c.pick("open")), c.body(_k(c.rng, size)), c.ending(cls))


def _fr_case_notes(c, cls, size):
    head = c.rng.choice([f"Case notes, day {c.rng.randint(2, 19)}.",
                         f"Private notebook. {c.rng.choice(DAYS)} evening."])
    return head + "\n\n" + _para(c.body(max(1, _k(c.rng, size)), ("desc", "act", "act")), c.ending(cls))


def _fr_log(c, cls, size):
    head = c.rng.choice([f"Captain's log, day {c.rng.randint(12, 480)} of the voyage.",
                         f"Personal log, {c.v['L']}, entry {c.rng.randint(3, 90)}."])
    return _para(head, c.body(max(1, _k(c.rng, size)), ("desc", "act")), c.ending(cls))


def _fr_this_is_the_story(c, cls, size):
    intro = c.rng.choice([
        f"This is the story of {c.name} and {c.v['X']}, and of what happened at {c.v['L']}.",
        f"This is the story of how {c.name} came to {c.v['L']}, and why {c.v['s']} never left.",
    ])
    return _para(intro, c.body(_k(c.rng, size)), c.ending(cls))


def _fr_second_person(c, cls, size):
    n = {"s": 1, "m": 3, "l": 5}[size]
    lines = c.rng.sample(FIC["second_person"], n)
    if cls == "o" and c.rng.random() < 0.3:
        return _para(lines)
    return _para(lines, c.rng.choice(FIC["second_person_endings"][cls]))


def _fr_epigraph(c, cls, size):
    q, src = c.rng.choice(FIC["epigraphs"])
    return f'"{q}"\n-- {src}\n\n' + _para(c.fill(c.pick("open")), c.body(_k(c.rng, size)), c.ending(cls))


def _fr_pov_header(c, cls, size):
    head = f"{c.rng.choice(FIC['number_words']).upper()}\n\n{c.name.upper()}"
    return head + "\n\n" + _para(c.fill(c.pick("open")), c.body(_k(c.rng, size)), c.ending(cls))


def _fr_broken_quote(c, cls, size):
    pre = c.body(_k(c.rng, size))
    line = c.fill(c.pick("say"))
    end = "" if line[-1] in "?!" else ","
    opener = f'"{line}{end}" {c.fill("-{X}")[1:]} said.'
    if cls == "c":
        tail = c.ending("c")
        return _para(pre, opener, tail)
    if cls == "m":
        tail = c.rng.choice(['"The thing is,', '"If you ask me,', '"What I want to know is',
                             '"All I know is that'])
    else:
        tail = '"'
    return _para(pre, opener, tail)


def _fr_storyteller(c, cls, size):
    return _para(c.fill(c.rng.choice(FIC["storyteller_openings"])), c.body(_k(c.rng, size)), c.ending(cls))


def _fr_excerpt(c, cls, size):
    head = c.rng.choice([f"From {c.pick('titles')}, chapter {c.rng.randint(2, 24)}:",
                         f"An excerpt from {c.pick('titles')} by {c.rng.choice(FIC['authors'])}"])
    return head + "\n\n" + _para(c.body(max(1, _k(c.rng, size))), c.ending(cls))


def _fr_recap(c, cls, size):
    head = c.fill(c.rng.choice(FIC["recaps"])) + f"\n\nChapter {c.rng.choice(FIC['number_words'])}"
    return head + "\n\n" + _para(c.body(max(1, _k(c.rng, size))), c.ending(cls))


def _fr_picture_book(c, cls, size):
    n = {"s": 1, "m": 2, "l": 4}[size]
    pages = [c.fill(c.pick("open"))] + c.body(n - 1, ("desc", "act", "say"))
    pages.append(c.ending(cls, allow_stop=False))
    return "\n\n".join(f"Page {i + 1}\n{t}" for i, t in enumerate(pages))


def _fr_note(c, cls, size):
    note = c.fill(c.rng.choice(FIC["notes"]))
    find = c.rng.choice(["A note had been slipped under the door. It read:",
                         "Someone had left a folded note on the table. In small, careful letters it said:",
                         "The note was pinned to the door with a kitchen knife. It said:"])
    return _para(c.body(_k(c.rng, size)), find, f'"{note}."', c.ending(cls))


def _fr_flash(c, cls, size):
    # very short piece: a single vivid line and an ending
    return _para(c.fill(c.pick("desc")), c.ending(cls))


def _fr_then_now(c, cls, size):
    k = max(2, _k(c.rng, size))
    then = c.rng.choice(["Back then,", "When {s} was young,", "Years ago,"])
    first = c.fill(c.pick("desc"))
    p1 = c.fill(then) + " " + first[0].lower() + first[1:]
    now = c.rng.choice(["Now", "These days", "Today"])
    second = c.fill(c.pick("act"))
    if second.split()[0] in ("He", "She", "The", "A", "Every", "Somewhere"):
        second = second[0].lower() + second[1:]
    p2 = f"{now}, {second}"
    return _para(p1, c.body(k - 2), p2, c.ending(cls))


# (function, allowed genres or None, forced first person or None), in fiction.json's rotation order
_FICTION_FUNCTIONS = {name[4:]: fn for name, fn in globals().items() if name.startswith("_fr_")}
FICTION_FRAMES = [(_FICTION_FUNCTIONS[f["frame"]], f["genres"], f["first_person"]) for f in FIC["frames"]]


def _size(rng: random.Random) -> str:
    r = rng.random()
    return "s" if r < 0.38 else ("m" if r < 0.68 else "l")


def _ok(text: str, lo: int = 10, hi: int = 150) -> bool:
    return bool(text) and lo <= _words(text) <= hi and text.isascii() and text == text.strip()


def _collect(source: str, compose) -> list[dict]:
    """TARGET distinct, acceptable texts ``compose(i, tries, cls)``, the ending class rotating c, m, o."""
    out: list[dict] = []
    seen: set[str] = set()
    i = tries = 0
    while len(out) < TARGET:
        tries += 1
        if tries > 50 * TARGET:
            raise RuntimeError(f"{source} generator could not reach its target")
        text = compose(i, tries, "cmo"[i % 3])
        if not _ok(text) or _norm(text) in seen:
            continue
        seen.add(_norm(text))
        out.append({"source": source, "text": text})
        i += 1
    return out


def generate_fiction() -> list[dict]:
    rng = random.Random(SEED)
    genres = sorted(GENRES)
    n = len(FICTION_FRAMES)

    def compose(i, tries, cls):
        fn, allowed, first = FICTION_FRAMES[(i // 3 + tries) % n if tries % 7 == 0 else (i // 3) % n]
        ctx = _Ctx(rng, rng.choice(allowed or genres), first)
        return _clean(fn(ctx, cls, _size(rng)))
    return _collect("fiction", compose)


# ===========================================================================
# QA: facts from qa_facts.jsonl, helper word lists from qa.json
# ===========================================================================
#
# The statement marks the answer's place with "_"; the text before "_" is the near-certain stem.


class Fact(NamedTuple):
    topic: str
    question: str
    answer: str
    statement: str
    wrong: tuple[str, ...]  # distractors
    explanation: str


FACTS = [Fact(r["topic"], r["question"], r["answer"], r["statement"], tuple(r["wrong"]), r["explanation"])
         for r in load("qa_facts.jsonl")]
_QA = load("qa.json")
TOPIC_NAME: dict[str, str] = _QA["topic_names"]
LEADS: list[str] = _QA["leads"]
_PROPER_START = set(_QA["proper_starts"])
LETTERS = "ABCD"


class _Deck:
    """Draws facts in a shuffled cycle so that every fact gets used."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.pools: dict[str | None, list] = {}

    def draw(self, topic: str | None = None, avoid=()) -> tuple:
        pool = self.pools.get(topic)
        if not pool:
            pool = [f for f in FACTS if topic is None or f.topic == topic]
            self.rng.shuffle(pool)
            self.pools[topic] = pool
        for i, f in enumerate(pool):
            if f not in avoid:
                return pool.pop(i)
        return pool.pop()

    def draw_n(self, n: int, topic: str | None = None) -> list[tuple]:
        out: list[tuple] = []
        while len(out) < n:
            out.append(self.draw(topic, out))
        return out


def _stem(f) -> str:
    return f.statement.split("_")[0].rstrip()


def _full(f, ans: str | None = None) -> str:
    return f.statement.replace("_", f.answer if ans is None else ans)


def _wrongs(f) -> list[str]:
    return list(f.wrong)


def _options(rng, f) -> tuple[list[str], str]:
    opts = [f.answer] + _wrongs(f)
    rng.shuffle(opts)
    return opts, LETTERS[opts.index(f.answer)]


def _expl_cut(rng, f) -> str:
    w = f.explanation.split()
    k = rng.randint(3, max(3, len(w) - 2))
    return " ".join(w[:k])


def _first_sentence(f) -> str:
    return f.explanation.split(". ")[0].rstrip(".") + "."


def _topic(f, cap: bool = True) -> str:
    t = TOPIC_NAME[f.topic]
    return t if cap else t.lower()


def _lc(text: str) -> str:
    """Lower-case a statement's first letter unless it starts with a proper noun."""
    return text if text.split()[0] in _PROPER_START else text[:1].lower() + text[1:]


def _short_or_full(rng, f) -> str:
    return _full(f) if rng.random() < 0.5 else _cap(f.answer) + "."


# ---------------------------------------------------------------------------
# QA frames: f(rng, deck, cls, big) -> text
# ``big`` asks for a longer prompt, usually by first showing earlier items
# that were already answered in the same format.
# ---------------------------------------------------------------------------

def _prior(rng, d, big, render, lo=2, hi=3, sep="\n\n", topic=None) -> str:
    if not big:
        return ""
    return sep.join(render(d.draw(topic)) for _ in range(rng.randint(lo, hi))) + sep


# One-fact frames are templates in qa.json (see its "about"); these are their placeholders.
_FIELD = re.compile(r"\{(\w+)\}")
_FACT_FIELDS = {
    "question": lambda rng, f: f.question,
    "answer": lambda rng, f: f.answer,
    "Answer": lambda rng, f: _cap(f.answer),
    "statement": lambda rng, f: _full(f),
    "statement_lc": lambda rng, f: _lc(_full(f)),
    "stem": lambda rng, f: _stem(f),
    "stem_lc": lambda rng, f: _lc(_stem(f)),
    "first_sentence": lambda rng, f: _first_sentence(f),
    "explanation": lambda rng, f: f.explanation,
    "topic": lambda rng, f: _topic(f),
    "topic_lc": lambda rng, f: _topic(f, False),
    # random, drawn where they stand
    "wrong": lambda rng, f: rng.choice(_wrongs(f)),
    "myth": lambda rng, f: _full(f, rng.choice(_wrongs(f))),
    "myth_clause": lambda rng, f: _lc(_full(f, rng.choice(_wrongs(f))))[:-1],
    "explanation_start": lambda rng, f: _expl_cut(rng, f),
    "answer_or_statement": lambda rng, f: _short_or_full(rng, f),
}


def _fill(template: str, rng, f, names: dict, choices: dict) -> str:
    """``template`` with its placeholders replaced left to right, so random ones draw in reading order."""
    def field(m):
        key = m.group(1)
        if key in _FACT_FIELDS:
            return _FACT_FIELDS[key](rng, f)
        if key not in names:
            names[key] = rng.choice(choices[key])
        return names[key]
    return _FIELD.sub(field, template)


def _template_frame(spec: dict):
    """The frame function of one template frame of qa.json."""
    def frame(rng, d, cls, big):
        cast = spec.get("cast", {})
        if "sample" in cast:
            names = dict(zip(cast["sample"], rng.sample(cast["from"], len(cast["sample"])), strict=True))
        else:
            names = {name: rng.choice(options) for name, options in cast.items()}
        prior = spec["prior"]
        f = d.draw() if prior.get("same_topic") else None
        names["prior"] = _prior(rng, d, big, lambda g: _fill(prior["text"], rng, g, names, {}),
                                prior["min"], prior["max"], prior.get("sep", "\n\n"),
                                f.topic if f else None)
        f = f or d.draw()
        ending = spec[cls] if "{prior}" in spec[cls] else "{prior}" + spec[cls]
        return _fill(ending, rng, f, names, spec.get("choices", {}))
    return frame


def _choice_frame(block, answered, endings):
    """A frame showing a question with shuffled options: ``block(rng, f)`` gives (text, key),
    ``answered(g, text, key)`` an earlier item with its answer, ``endings[cls](rng, f, key)`` the end."""
    def frame(rng, d, cls, big):
        pre = _prior(rng, d, big, lambda g: answered(g, *block(rng, g)), 1, 2)
        f = d.draw()
        head, key = block(rng, f)
        return pre + head + endings[cls](rng, f, key)
    return frame


def _mc_block(rng, f) -> tuple[str, str]:
    opts, letter = _options(rng, f)
    return f"Question: {f.question}\n" + "\n".join(f"{LETTERS[i]}) {o}" for i, o in enumerate(opts)), letter


def _mc_inline(rng, f) -> tuple[str, str]:
    opts, letter = _options(rng, f)
    return f"{f.question} " + " ".join(f"({'abcd'[i]}) {o}" for i, o in enumerate(opts)), letter.lower()


def _choose_block(rng, f) -> tuple[str, int]:
    opts, letter = _options(rng, f)
    return (f"Choose one. {f.question}\n" + "\n".join(f"Option {i + 1}: {o}" for i, o in enumerate(opts)),
            LETTERS.index(letter) + 1)


_qa_mc_block = _choice_frame(
    _mc_block, lambda g, block, key: f"{block}\nAnswer: {key}\nExplanation: {_first_sentence(g)}",
    {"c": lambda rng, f, key: "\nAnswer:",
     "m": lambda rng, f, key: f"\nAnswer: {key}\nExplanation: {_expl_cut(rng, f)}",
     "o": lambda rng, f, key: f"\nAnswer: {key}\nExplanation: {f.explanation}"})
_qa_mc_inline = _choice_frame(
    _mc_inline, lambda g, line, key: f"{line}\nThe correct answer is ({key}). {_first_sentence(g)}",
    {"c": lambda rng, f, key: "\nThe correct answer is",
     "m": lambda rng, f, key: f"\nThe correct answer is ({key}), because",
     "o": lambda rng, f, key: f"\nThe correct answer is ({key})."})
_qa_choose_option = _choice_frame(
    _choose_block, lambda g, block, k: f"{block}\nCorrect option: Option {k}. {_first_sentence(g)}",
    {"c": lambda rng, f, k: "\nCorrect option: Option",
     "m": lambda rng, f, k: "\nCorrect option:",
     "o": lambda rng, f, k: f"\nCorrect option: Option {k}."})


def _qa_fewshot(rng, d, cls, big):
    n = rng.randint(4, 6) if big else rng.randint(2, 3)
    topic = rng.choice([None, rng.choice(sorted(TOPIC_NAME))])
    fs = d.draw_n(n + 1, topic)
    short = (not big) and rng.random() < 0.5
    lines = []
    for f in fs[:-1]:
        ans = _cap(f.answer) + "." if short else _full(f)
        lines.append(f"Q: {f.question}\nA: {ans}")
    last = fs[-1]
    if cls == "c":
        lines.append(f"Q: {last.question}\nA: {_stem(last)}")
    elif cls == "m":
        lines.append(f"Q: {last.question}\nA:")
    else:
        lines.append(f"Q: {last.question}\nA: {_full(last)}\n\nQ:")
    sep = "\n\n" if rng.random() < 0.5 else "\n"
    return sep.join(lines)


def _qa_true_false(rng, d, cls, big):
    lead = rng.choice(["True or false:", "True or false?", "Decide whether this statement is true or false."])

    def item(g):
        true = rng.random() < 0.5
        return (_full(g) if true else _full(g, rng.choice(_wrongs(g)))), true

    def done(g):
        stmt, true = item(g)
        return f"{lead} {stmt}\nAnswer: " + ("True." if true else f"False. {_full(g)}") + f" {_first_sentence(g)}"
    pre = _prior(rng, d, big, done, 1, 2)
    f = d.draw()
    stmt, true = item(f)
    if cls in ("c", "m"):
        return pre + f"{lead} {stmt}\nAnswer:"
    verdict = "True." if true else f"False. {_full(f)}"
    return pre + f"{lead} {stmt}\nAnswer: {verdict}"


def _qa_fill_blank(rng, d, cls, big):
    head = "Fill in the blank"
    if big:
        fs = d.draw_n(rng.randint(4, 6))
        lines = [f"{i + 1}. {g.statement.replace('_', '____')} ({g.answer})" for i, g in enumerate(fs[:-1])]
        f = fs[-1]
        k = len(fs)
        intro = "Fill in each blank. The answers to the first few are given in brackets.\n"
        if cls == "c":
            return intro + "\n".join(lines) + f"\n{k}. {_stem(f)}"
        if cls == "m":
            return intro + "\n".join(lines) + f"\n{k}. {f.statement.replace('_', '____')} ("
        return intro + "\n".join(lines) + f"\n{k}."
    f = d.draw()
    blank = f.statement.replace("_", "____")
    if cls == "c":
        return f"{head}: {blank}\nAnswer:"
    if cls == "m":
        return f"{head} ({_topic(f, False)}): {blank}\nAnswer: {f.answer}\nWhy:"
    return f"{head}: {blank}\nAnswer: {f.answer}\n\nNext one."


def _qa_trivia_night(rng, d, cls, big):
    n = rng.randint(1, 8)
    q = rng.randint(2, 10)
    f = d.draw()
    pre = ""
    if big:
        g = d.draw()
        pre = (f"Quizmaster: Right, everyone, pens down for a second. That was question {q - 1}: {g.question} "
               f"The answer is {g.answer}. {_first_sentence(g)} Okay, scores on the board at the break.\n")
    head = f"Trivia night, round {n}: {_topic(f)}.\n{pre}Question {q}: {f.question}"
    if cls == "c":
        return head + f"\nQuizmaster: The answer is... {_stem(f)}"
    if cls == "m":
        return head + "\nOur team's answer:"
    remark = rng.choice(["Well done to table four.", "Three teams got that one.", "Nobody got that one."])
    return head + f"\nQuizmaster: The answer is {f.answer}! {remark}"


def _qa_forum(rng, d, cls, big):
    f = d.draw()
    worry = rng.choice(["My friends and I can't agree on this one.",
                        "I have always wondered about this.",
                        "This came up at dinner and nobody knew for sure.",
                        "Settle an argument for me, please."])
    extra = ""
    if big:
        w = rng.choice(_wrongs(f))
        extra = (f" My uncle insists the answer is {w}, and he has been saying it for years. I looked it up "
                 f"once but found two different answers, so I gave up. Can someone who actually knows "
                 f"explain it properly, with a source if possible?")
    head = f"Posted in Ask Anything\n\n{f.question} {worry}{extra}\n\nTop answer:"
    if cls == "c":
        return head + f" Short version: {_stem(f)}"
    if cls == "m":
        return head
    return head + f" {_full(f)} {f.explanation}\n\nReply:"


def _qa_quiz_list(rng, d, cls, big):
    topic = rng.choice(sorted(TOPIC_NAME))
    n = rng.randint(6, 8) if big else rng.randint(3, 4)
    fs = d.draw_n(n, topic)
    head = f"{TOPIC_NAME[topic]} quiz\n" + "\n".join(f"{i + 1}. {f.question}" for i, f in enumerate(fs))
    if cls == "o":
        return head + f"\n{n + 1}."
    k = rng.randint(1, n - 1)
    answers = "\n".join(f"{i + 1}. {_cap(f.answer)}" for i, f in enumerate(fs[:k]))
    tail = f"\n{k + 1}."
    if cls == "c":
        tail = f"\n{k + 1}. {_stem(fs[k])}"
    return head + "\n\nAnswers:\n" + answers + tail


def _qa_exam(rng, d, cls, big):
    f = d.draw()
    num = rng.randint(2, 12)
    head = f"Section {rng.choice('ABC')}: short answers ({rng.randint(2, 6)} marks each)\n\n"
    if big:
        g = d.draw()
        head += ("Answer all questions in this section. Write in full sentences, and where a question "
                 "asks for a reason, marks are given for the reason as well as the answer.\n\n"
                 f"{num - 1}. {g.question}\n\nModel answer: {_full(g)} {g.explanation}\n\n")
    head += f"{num}. {f.question} Give a reason or example to support your answer."
    if cls == "c":
        return head + f"\n\nModel answer: {_stem(f)}"
    if cls == "m":
        return head + f"\n\nModel answer: {_full(f)} {_expl_cut(rng, f)}"
    return head + "\n\nModel answer:"


def _qa_reveal(rng, d, cls, big):
    n = rng.randint(3, 20)
    pre = ""
    if big:
        g = d.draw()
        pre = (f"Right, let's go through the answers. Question {n - 1} was \"{g.question}\" and the answer "
               f"is {g.answer}. {_first_sentence(g)} Give yourselves a point if you got that. ")
    f = d.draw()
    if cls == "c":
        return pre + f"And the answer to question {n}, \"{f.question}\", is"
    if cls == "m":
        return pre + (f"And the answer to question {n}, \"{f.question}\", is {f.answer}. If you wrote "
                      f"{rng.choice(_wrongs(f))}, you can have half a point, because")
    return pre + f"And the answer to question {n}, \"{f.question}\", is {f.answer}. Let's move on to question {n + 1}."


def _qa_quickfire(rng, d, cls, big):
    fs = d.draw_n(rng.randint(6, 8) if big else rng.randint(2, 3))
    parts = ["Quick-fire round!"]
    for f in fs[:-1]:
        parts.append(f"{f.question} {_cap(f.answer)}.")
    last = fs[-1]
    if cls == "c":
        parts.append(f"{last.question} {_stem(last)}")
    elif cls == "m":
        parts.append(last.question)
    else:
        parts.append(f"{last.question} {_cap(last.answer)}. And the next one:")
    return " ".join(parts)


def _choose_block(rng, f) -> tuple[str, int]:
    opts, letter = _options(rng, f)
    return (f"Choose one. {f.question}\n" + "\n".join(f"Option {i + 1}: {o}" for i, o in enumerate(opts)),
            LETTERS.index(letter) + 1)


def _qa_arrow(rng, d, cls, big):
    fs = d.draw_n(rng.randint(6, 8) if big else rng.randint(1, 3))
    lines = [f"{f.question} -> {f.answer}" for f in fs[:-1]]
    last = fs[-1]
    if cls == "c":
        lines.append(f"{last.question} -> {_stem(last)}")
    elif cls == "m":
        lines.append(f"{last.question} ->")
    else:
        lines.append(f"{last.question} -> {last.answer}\nNow write your own question:")
    return "\n".join(lines)


def _qa_worksheet(rng, d, cls, big):
    topic = rng.choice(sorted(TOPIC_NAME))
    fs = d.draw_n(rng.randint(4, 6) if big else rng.randint(2, 3), topic)
    head = (f"Name: ____________ Class: ______\n{TOPIC_NAME[topic]} worksheet\n"
            "Read each question carefully and write your answer on the line.")
    body = []
    for i, f in enumerate(fs[:-1]):
        body.append(f"{i + 1}. {f.question}\nAnswer: {f.answer}")
    last = fs[-1]
    k = len(fs)
    if cls == "c":
        body.append(f"{k}. {last.question}\nAnswer: {_stem(last)}")
    elif cls == "m":
        body.append(f"{k}. {last.question}\nAnswer:")
    else:
        body.append(f"{k}. {last.question}\nAnswer: {last.answer}\n{k + 1}.")
    return head + "\n" + "\n".join(body)


_QA_FUNCTIONS = {name[4:]: fn for name, fn in globals().items() if name.startswith("_qa_")}
# qa.json's rotation order; a name is a template frame of qa.json or a _qa_<name> function above
QA_FRAMES = [_template_frame(_QA["templates"][name]) if name in _QA["templates"] else _QA_FUNCTIONS[name]
             for name in _QA["frames"]]


def generate_qa() -> list[dict]:
    rng = random.Random(SEED + 1)
    deck = _Deck(rng)

    def compose(i, tries, cls):
        fn = QA_FRAMES[(i // 3 + (tries - i)) % len(QA_FRAMES)]
        big = rng.random() < 0.3
        text = _clean(fn(rng, deck, cls, big))
        return rng.choice(LEADS) + " " + text if _words(text) < 10 else text
    return _collect("qa", compose)


def generate() -> list[dict]:
    """All fiction records, then all qa records, in a fixed order."""
    return generate_fiction() + generate_qa()
