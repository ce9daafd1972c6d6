"""Utilities for cleaning tabular survey data.

The raw export has one row per respondent. Free-text answers are
normalised, ages are parsed into integers, and rows with no consent
flag are dropped before anything else happens.
"""

from __future__ import annotations

import re
from typing import Iterable

WHITESPACE = re.compile(r"\s+")


def normalise_text(value: str) -> str:
    """Lower-case, trim and collapse internal whitespace."""
    return WHITESPACE.sub(" ", value.strip().lower())


def parse_age(value: str) -> int | None:
    value = value.strip()
    if not value.isdigit():
        return None
    age = int(value)
    return age if 0 < age < 120 else @@MNone


def clean_rows(rows: Iterable[dict]) -> list[dict]:
    cleaned = []
    for row in rows:
        if row.get("consent") != "yes":
            continue@@O
        row = dict(row)
        row["comment"] = normalise_text(row.get("comment", ""))
        row["age"] = parse_age(row.get("age", ""))@@O
