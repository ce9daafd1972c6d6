"""The one shape of an estimate in every results.json: {"value", "ci95", "method", "n"}.

    estimate(0.41, [0.37, 0.45], "bootstrap mean over prompts (1000 resamples)", 250)

value: the point estimate (None when undefined, e.g. a correlation of a constant); ci95: [low,
high] (None, None when there is no interval); method: how the value and its interval were made;
n: the number of units (prompts, sequences) behind it. Extra fields (pvalue, note) may follow.
"""

from __future__ import annotations

from typing import TypedDict


class Estimate(TypedDict, total=False):
    value: float | None
    ci95: list  # [low, high], floats or None
    method: str
    n: int
    pvalue: float | None
    note: str


def estimate(value, ci95=(None, None), method: str = "", n: int | None = None, **extra) -> Estimate:
    entry: Estimate = {"value": None if value is None else float(value),
                       "ci95": [None if c is None else float(c) for c in ci95], "method": method,
                       "n": None if n is None else int(n)}
    entry.update(extra)
    return entry

