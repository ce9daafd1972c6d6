"""What every suite's results.json shares, and the check each is written under.

Every <run>/<suite>/results.json starts with the Header (schema_version, suite, model,
geomprobe_version) and is the TypedDict its suite registered (register_suite(..., schema=,
schema_version=); the built-in suites' live in geomprobe/suites/<name>/results.py, each with the
SCHEMA_VERSION that counts breaking changes of its own layout). The types below are the ones several
suites use. An estimate is always geomprobe.analysis.estimate.Estimate {value, ci95, method, n}; a
few headline scalars sit flat beside their interval (pc1 and pc1_ci95). Every suite's results are
checked against its type before they are written (check_results); RESULTS_SCHEMA.md is generated
from the types (geomprobe.results.schema_markdown).
"""

from __future__ import annotations

import typing
from typing import Any, TypedDict

from geomprobe.analysis.estimate import Estimate

SCHEMA_VERSION = 3  # a suite without a version of its own writes this; 1: no header; 2: before untrained nulls
HEADER = ("schema_version", "suite", "model", "geomprobe_version")


class Header(TypedDict):
    schema_version: int  # SCHEMA_VERSION of the geomprobe that wrote the file
    suite: str  # the registered suite name
    model: str  # the model spec the run was given
    geomprobe_version: str  # geomprobe.__version__ that wrote the file


class _PromptsRequired(TypedDict):
    source: str  # the file, corpus or wind-tunnel task the prompts came from
    n: int  # prompts used


class PromptsUsed(_PromptsRequired, total=False):
    stratified: bool  # drawn by next-token-entropy quintile


class NullComparison(TypedDict, total=False):
    statistic: str  # what is compared
    model: float  # the model's value
    nulls: list  # each null model's value, in the order of UntrainedNull.models
    n_nulls: int  # finite null values used
    n_nulls_not_finite: int  # null values that could not be computed (dropped)
    null_mean: float  # their mean
    null_sd: float | None  # their standard deviation (ddof 1)
    null_prediction_interval: list | None  # where one more untrained copy would fall (90%, t over the nulls)
    t: float | None  # (model - null mean) / (sd sqrt(1 + 1/N))
    rank: int  # 1 + the nulls at least as good as the model
    of: int  # N + 1
    rule: str  # rank | t | none: how the status was decided (geomprobe.analysis.null_comparison)
    rule_note: str  # why that rule
    alpha: float  # one-sided level of each direction
    p_value: float  # one-sided p of "above untrained" under the rule
    p_value_below: float  # the same for "below untrained"
    p_rank: float  # the rank rule's p, whatever the rule
    mde: dict  # sd, value: the difference detected half the time (Gaussian nulls); power; note
    seed_check: str  # how seed-to-seed variation was checked
    difference: Estimate  # model - null mean, and model minus the prediction interval of one more copy
    higher_is_better: bool  # False for key |cos| (lower: more orthogonal)
    status: str  # above untrained | indistinguishable from untrained | below untrained | not tested
    note: str  # why a comparison was not tested
    sequential: dict  # planned, used, above_fixed_at, below_fixed_at: copies stopped once the decision was fixed


class _UntrainedNullRequired(TypedDict):
    spec: str  # the --null value
    description: str  # the null models' names
    models: list  # per null model: name, kind, seed or spec, pc1, pc12, focusing, key_layer_mean, ...
    comparisons: dict[str, NullComparison]  # pc1, pc12, keys, focusing
    note: str  # how the comparison is made


class UntrainedNull(_UntrainedNullRequired, total=False):
    copies: dict  # planned, used, stopped_early, rule: the sequential stop (SequentialRank.summary)


class PaperCodeRow(TypedDict):
    quantity: str  # the geomprobe.paper_code.DEFINITIONS key
    label: str  # what the row shows, in words
    geomprobe: float | None  # geomprobe's number as the suite reports it (None: not a geomprobe headline)
    paper_code: float | None  # the same quantity as the papers' released code defines it, on the same arrays
    geomprobe_how: str  # geomprobe's definition, in one line
    paper_code_how: str  # the released script and its definition, in one line
    published: float | None  # the figure the papers or their code report, where one exists
    published_source: str | None  # where that figure comes from
    same_definition: bool  # both define the quantity alike (the numbers then agree to rounding)
    released_file: str | None  # the released code's file


class PaperCodeTable(TypedDict, total=False):
    definitions: str  # paper-code | paper-code-as-released
    note: str  # how to read the rows
    rows: list[PaperCodeRow]  # the side-by-side table
    scripts: dict  # each released script's value-manifold numbers (geomprobe.paper_code.released_value_manifold)
    calibration_per_k: dict  # sula: the released MAE and Pearson per k and "all"
    embedding_key_draws: list  # geometry: the embedding-cosine key statistic of 10 seeded draws
    released_values: str  # sula, paper-code-as-released: what the released code's "values" are on this model


SHARED_NESTED = (PromptsUsed, UntrainedNull, NullComparison)  # listed in RESULTS_SCHEMA.md


def with_header(suite: str, model: str, results: dict, version: int | None = None) -> dict:
    """The results with the header first (version: the suite's schema version, SCHEMA_VERSION if None)."""
    from geomprobe import __version__

    body = {k: v for k, v in results.items() if k not in HEADER}
    return {"schema_version": SCHEMA_VERSION if version is None else version, "suite": suite, "model": model,
            "geomprobe_version": __version__, **body}


def _hints(schema: type) -> dict:
    return typing.get_type_hints(schema)


def schema_problems(suite: str, data: dict, schema: type | None) -> list[str]:
    """What in `data` does not match the suite's results type: missing required keys, unknown keys,
    and values of the wrong kind (checked one level into nested TypedDicts). Empty when it matches."""
    if schema is None:  # a plugin suite without a declared type: only its header is checked
        return [f"{suite}: missing {key}" for key in HEADER if key not in data]
    return _problems(schema, data, suite)


def _problems(schema: type, data, where: str) -> list[str]:
    if not isinstance(data, dict):
        return [f"{where}: expected an object, got {type(data).__name__}"]
    hints = _hints(schema)
    problems = [f"{where}: missing {key}" for key in sorted(schema.__required_keys__) if key not in data]
    problems += [f"{where}: unknown key {key}" for key in data if key not in hints]
    for key, hint in hints.items():
        if key in data:
            problems += _value_problems(hint, data[key], f"{where}.{key}")
    return problems


def _value_problems(hint, value, where: str) -> list[str]:
    origin = typing.get_origin(hint)
    if origin in (typing.Required, typing.NotRequired):
        return _value_problems(typing.get_args(hint)[0], value, where)
    if origin in (typing.Union, __import__("types").UnionType):
        options = typing.get_args(hint)
        if any(not _value_problems(option, value, where) for option in options):
            return []
        return [f"{where}: {type(value).__name__} is none of {', '.join(getattr(o, '__name__', str(o)) for o in options)}"]
    if hint is type(None):
        return [] if value is None else [f"{where}: expected null"]
    if isinstance(hint, type) and typing.is_typeddict(hint):
        return _problems(hint, value, where)
    base = origin or hint
    if base is Any:
        return []
    if base is dict and isinstance(value, dict) and len(typing.get_args(hint)) == 2:
        item = typing.get_args(hint)[1]
        return [p for k, v in value.items() for p in _value_problems(item, v, f"{where}.{k}")]
    if base is list and isinstance(value, list) and typing.get_args(hint):
        item = typing.get_args(hint)[0]
        return [p for i, v in enumerate(value) for p in _value_problems(item, v, f"{where}[{i}]")]
    expected = {float: (int, float), int: (int,), str: (str,), bool: (bool,), dict: (dict,), list: (list,)}
    if base in expected and (not isinstance(value, expected[base]) or (base is int and isinstance(value, bool))):
        return [f"{where}: expected {base.__name__}, got {type(value).__name__}"]
    return []


def check_results(suite: str, data: dict, schema: type | None) -> None:
    """Raise (a bug, not a user error) when a suite's results do not match its declared type."""
    problems = schema_problems(suite, data, schema)
    if problems:
        schema = schema or Header
        raise TypeError(f"{suite} results do not match {schema.__module__}.{schema.__name__}: "
                        + "; ".join(problems[:8]))
