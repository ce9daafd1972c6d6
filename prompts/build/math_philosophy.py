"""Deterministic prompt generators for the "math" and "philosophy" sources.

All text is original and lives in prompts/fragments/math.json and philosophy.json.
``generate()`` returns a list of records ``{"source": <name>, "text": <prompt>}`` in a fixed
order. Prompts are a mix of hand-written passages and compositions from hand-written frames;
the endings are deliberately spread between nearly certain continuations ("Therefore x ="),
medium ones ("The derivative of sin(x) is") and wide-open ones (cut after a full stop or colon).

Only the standard library is used and all randomness goes through ``random.Random`` with fixed
seeds, so repeated calls give identical output. The order of the random draws is part of the
output: the parameter functions below draw in a fixed order, before any template is chosen.
"""

from __future__ import annotations

import random

from .data import load

MATH_SEED = 71123
PHILOSOPHY_SEED = 52817

MATH = load("math.json")
PHIL = load("philosophy.json")


def _clean(text):
    """Collapse internal whitespace runs and strip both ends."""
    return " ".join(text.split())


def _dedup(texts):
    seen = set()
    out = []
    for t in texts:
        t = _clean(t)
        if not t:
            continue
        key = " ".join(t.lower().split())
        if key in seen:
            continue
        seen.add(key)
        out.append(t)
    return out


def _pick(k, options):
    return options[k % len(options)]


def _cap(s):
    return s[0].upper() + s[1:]


# ---------------------------------------------------------------------------
# MATH: one parameter function a frame of math.json, returning its template's fields
# ---------------------------------------------------------------------------

_WORDS = MATH["number_words"]
_NAMES = MATH["names"]


def _p_arith_words(rng):
    a, b = rng.randint(2, 12), rng.randint(2, 9)
    op = rng.choice(["plus", "times", "minus"])
    if b > a:
        a, b = b, a
    return {"A": _WORDS[a].capitalize(), "a": _WORDS[a], "op": op, "B": _WORDS[b]}


def _p_linear(rng):
    a, x, b = rng.randint(2, 9), rng.randint(-6, 15), rng.randint(1, 30)
    return {"a": a, "b": b, "c": a * x + b, "d": a * x}


def _p_quadratic(rng):
    r1, r2 = rng.randint(1, 9), rng.randint(1, 9)
    return {"s": r1 + r2, "p": r1 * r2, "r1": r1, "r2": r2}


def _p_power_rule(rng):
    return {"n": rng.randint(3, 12), "coef": rng.randint(2, 9)}


def _p_integral(rng):
    n = rng.randint(2, 8)
    return {"n": n, "m": n + 1}


def _p_gcd(rng):
    g = rng.choice([2, 3, 4, 6, 7, 8, 9, 12, 15])
    a, b = g * rng.randint(2, 9), g * rng.randint(2, 9)
    return {"a": a, "b": b + g if a == b else b}


def _p_prime(rng):
    p, q = rng.choice([7, 11, 13, 17, 19, 23]), rng.choice([3, 7, 11, 13, 17])
    return {"n": p * q, "p": p, "q": q, "pr": rng.choice([41, 53, 67, 71, 89, 97, 101, 113])}


def _p_rectangle(rng):
    return {"l": rng.randint(4, 30), "w": rng.randint(2, 20)}


def _p_circle(rng):
    r = rng.randint(2, 15)
    return {"r": r, "d": 2 * r}


def _p_pythagoras(rng):
    a, b, c = rng.choice(MATH["pythagorean_triples"])
    return {"a": a, "b": b, "c": c}


def _p_dice(rng):
    s = rng.randint(2, 12)
    return {"s": s, "w": 6 - abs(s - 7)}  # w: the ways two dice make s


def _p_coin(rng):
    n = rng.randint(2, 8)
    return {"n": n, "N": _WORDS[n]}


def _p_determinant(rng):
    a, b, c, d = (rng.randint(-5, 9) for _ in range(4))
    return {"a": a, "b": b, "c": c, "d": d}


def _p_speed(rng):
    t, v = rng.randint(2, 6), rng.choice([45, 50, 60, 64, 72, 80, 90])
    return {"d": v * t, "t": t, "v": v, "w": v - 10, "name": rng.choice(_NAMES)}


def _p_percent(rng):
    p, pct = rng.choice([40, 60, 80, 120, 200, 240]), rng.choice([10, 15, 20, 25, 30, 50])
    return {"p": p, "pct": pct, "disc": p * pct // 100}


def _p_series(rng):
    n = rng.choice([10, 20, 25, 50, 100, 12, 30])
    return {"n": n, "m": n + 1}


def _p_mod(rng):
    m = rng.randint(3, 12)
    return {"a": rng.randint(m + 1, 99), "m": m}


def _p_power(rng):
    n = rng.randint(3, 12)
    return {"b": rng.choice([2, 3, 5, 10]), "n": n, "m": n - 2}


def _p_system(rng):
    x, y = rng.randint(1, 12), rng.randint(1, 12)
    return {"s": x + y, "d": x - y, "tx": 2 * x, "cost": 5 * x + 2 * y}


def _p_mean(rng):
    vals = [rng.randint(50, 100) for _ in range(rng.randint(4, 6))]
    return {"l": ", ".join(str(v) for v in vals), "name": rng.choice(_NAMES)}


def _p_choose(rng):
    return {"n": rng.randint(5, 12), "r": rng.randint(2, 4)}


def _p_slope(rng):
    x1, y1 = rng.randint(-5, 5), rng.randint(-5, 5)
    dx, m = rng.randint(1, 4), rng.randint(-3, 4)
    return {"x1": x1, "y1": y1, "x2": x1 + dx, "y2": y1 + m * dx}


def _p_factorial(rng):
    n = rng.randint(4, 8)
    return {"n": n, "N": _WORDS[n].capitalize(), "m": n - 1, "prod": " x ".join(str(i) for i in range(n, 0, -1))}


def _p_story(rng):
    name = rng.choice(_NAMES)
    friend = rng.choice([x for x in _NAMES if x != name])
    item, place = rng.choice(MATH["items"])
    a, b = rng.randint(8, 40), rng.randint(3, 20)
    return {"name": name, "friend": friend, "item": item, "place": place, "a": a, "b": b, "c": rng.randint(2, a), "t": 2 * a + b}


def _p_fraction(rng):
    b, d = rng.randint(3, 9), rng.randint(2, 9)
    return {"a": rng.randint(1, b - 1), "b": b, "c": rng.randint(1, d - 1), "d": d}


def _p_vector(rng):
    u = [rng.randint(-4, 6) for _ in range(3)]
    v = [rng.randint(-4, 6) for _ in range(3)]
    return {"u0": u[0], "u1": u[1], "u2": u[2], "v0": v[0], "v1": v[1], "v2": v[2]}


_PARAMETERS = {name[3:]: fn for name, fn in globals().items() if name.startswith("_p_")}


def _math_frame(rng, frame, k):
    """Frame ``frame`` of math.json with its k-th template (cyclically), after its numbers are drawn."""
    body = _pick(k, frame["templates"]).format(**_PARAMETERS[frame["name"]](rng))
    if "intro" in frame and rng.random() < frame["intro_probability"]:
        intro = rng.choice(MATH["intros"][frame["intro"]])
        if rng.random() < 0.75:
            intro += " " + rng.choice(MATH["leads"])
        return intro + " " + body
    return body


def _math_frame_texts(rng):
    out = []
    for frame in MATH["frames"]:
        offset = rng.randrange(12)
        for i in range(frame["count"]):
            out.append(_maybe_cut_open(rng, _math_frame(rng, frame, offset + i)))
    return out


def _maybe_cut_open(rng, text, prob=0.4):
    """Sometimes stop right after the last complete sentence (an open end)."""
    if rng.random() >= prob:
        return text
    cut = max(text.rfind(". ", 0, len(text) - 1),
              text.rfind("? ", 0, len(text) - 1))
    if cut < 10:
        return text
    return text[:cut + 1]


# ---------------------------------------------------------------------------
# PHILOSOPHY: views and concepts through the frames of philosophy.json
# ---------------------------------------------------------------------------

def _bare(term):
    if term.startswith("a priori"):
        return term
    for art in ("a ", "an ", "the "):
        if term.startswith(art):
            return term[len(art):]
    return term


def _lead(rng):
    return rng.choice(PHIL["leads"]).format(n=rng.randint(2, 12))


def _draw(rng, what, topic, definition=""):
    """One random field of a frame: an intro for the topic, a lead, a number or a cut definition."""
    if what == "intro":
        return rng.choice(PHIL["intros"][topic])
    if what == "lead":
        return _lead(rng)
    if what == "number":
        return rng.randint(2, 20)
    words = definition.split()  # "definition_start"
    return " ".join(words[:rng.randint(3, min(5, len(words) - 2))])


def _render(rng, frame, fields, topic, definition=""):
    for what in frame.get("draws", ()):
        fields[what] = _draw(rng, what, topic, definition)
    return frame["text"].format(**fields)


def _view_text(rng, frame, view):
    fields = {"name": view["name"], "Pronoun": _cap(view["pronoun"]), "thesis": view["thesis"],
                  "reason": view["reason"], "topic_words": PHIL["topic_words"][view["topic"]]}
    return _render(rng, frame, fields, view["topic"])


def _concept_text(rng, frame, concept):
    term, plural = concept["term"], concept.get("plural", False)
    fields = {"term": term, "Term": _cap(term), "bare": _bare(term), "Bare": _cap(_bare(term)),
              "is": "are" if plural else "is", "it": "they" if plural else "it",
              "it_obj": "them" if plural else "it",
              "definition": concept["definition"], "illustration": concept["illustration"]}
    return _render(rng, frame, fields, concept["topic"], concept["definition"])


def _contrast_texts(rng):
    """Long prompts contrasting two philosophers on the same topic."""
    by_topic = {}
    for v in PHIL["views"]:
        by_topic.setdefault(v["topic"], []).append(v)
    out = []
    for topic in sorted(by_topic):
        views = by_topic[topic]
        pairs = [(a, b) for i, a in enumerate(views) for b in views[i + 1:]
                 if a["name"] != b["name"]]
        rng.shuffle(pairs)
        for a, b in pairs[:3]:
            template = _pick(len(out), PHIL["contrast_frames"])
            intro = rng.choice(PHIL["intros"][topic])
            out.append(template.format(intro=intro, lead=_lead(rng), topic_words=PHIL["topic_words"][topic],
                                       name1=a["name"], name2=b["name"], thesis1=a["thesis"],
                                       thesis2=b["thesis"]))
    return out


def _phil_frame_texts(rng):
    out = []
    frames = PHIL["view_frames"]
    for i, view in enumerate(PHIL["views"]):
        for j in (0, 1):
            out.append(_view_text(rng, frames[(2 * i + j * 5) % len(frames)], view))
    frames = PHIL["concept_frames"]
    for i, concept in enumerate(PHIL["concepts"]):
        for j in (0, 1):
            out.append(_concept_text(rng, frames[(i + j * 3) % len(frames)], concept))
    out += _contrast_texts(rng)
    return out


# ---------------------------------------------------------------------------
# Assembly
# ---------------------------------------------------------------------------

def _texts(data, seed, frame_texts):
    rng = random.Random(seed)
    texts = data["short"] + data["medium"] + data["long"] + frame_texts(rng)
    for t in texts:
        t.encode("ascii")
    texts = _dedup(texts)
    rng.shuffle(texts)
    return texts


def generate():
    return ([{"source": "math", "text": t} for t in _texts(MATH, MATH_SEED, _math_frame_texts)]
            + [{"source": "philosophy", "text": t} for t in _texts(PHIL, PHILOSOPHY_SEED, _phil_frame_texts)])
