"""Options written once: a dataclass field carries its default, help, range and command-line name.

    @dataclass
    class MyConfig(SuiteConfig):
        n_draws: int = option(100, "random draws per condition", min=1)
        mode: Literal["fast", "exact"] = option("exact", "how the statistic is computed")
        layers: tuple[int, ...] = option((0, 1), "comma-separated layer indices")

`validate(config)` (called by every geomprobe config's __post_init__) coerces each field to its
declared type and checks its choices and range, so the Python API and the command line refuse the
same values with the same one-line ConfigError. A sequence field also takes a comma-separated
string ("cut,only"), and `aliases` name whole values ({"all": (...), "none": ()}).
`geomprobe.cli` builds one command-line option per field from the same metadata.
"""

from __future__ import annotations

import dataclasses
import math
import os
import types
import typing
from dataclasses import dataclass
from functools import cache

from geomprobe.errors import ConfigError


def option(default, help: str, *, min: float | None = None, max: float | None = None, cli: str | None = None,
           aliases: dict | None = None, strip: bool = True, exclusive_min: bool = False, noun: str | None = None):
    """A dataclass field with the metadata validate() and the CLI read.

    cli: the command-line flag when it is not --<name with dashes> (e.g. "--lambda");
    aliases: strings that stand for whole values of a sequence field; strip: strip whitespace
    around the items of a comma-separated string (off for token strings such as ' dax');
    exclusive_min: the value must be strictly above `min`; noun: what one choice is called in errors
    ("unknown operation 'x'"), by default the field name less a final s."""
    return dataclasses.field(default=default, metadata={
        "help": help, "min": min, "max": max, "cli": cli, "aliases": aliases or {}, "strip": strip,
        "exclusive_min": exclusive_min, "noun": noun})


@dataclass(frozen=True)
class Kind:
    """What a field holds: a scalar or a tuple of `base` (int, float, str, bool), maybe restricted
    to `choices`, maybe None."""

    base: type
    sequence: bool = False
    length: int | None = None  # a fixed-length tuple such as tuple[str, str]
    choices: tuple | None = None
    optional: bool = False


def _kind_of(annotation) -> Kind:
    optional = False
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        optional = len(args) < len(typing.get_args(annotation))
        if len(args) != 1:
            raise TypeError(f"unsupported option type {annotation}")
        annotation, origin = args[0], typing.get_origin(args[0])
    sequence, length = False, None
    if origin is tuple:
        args = typing.get_args(annotation)
        sequence = True
        if len(args) == 2 and args[1] is Ellipsis:
            annotation = args[0]
        else:
            length, annotation = len(args), args[0]
        origin = typing.get_origin(annotation)
    choices = None
    if origin is typing.Literal:
        choices = typing.get_args(annotation)
        annotation = type(choices[0])
    if annotation not in (int, float, str, bool):
        raise TypeError(f"unsupported option type {annotation}")
    return Kind(base=annotation, sequence=sequence, length=length, choices=choices, optional=optional)


@cache
def fields_of(cls) -> tuple[tuple[dataclasses.Field, Kind], ...]:
    """(field, kind) for every option field of a config dataclass, in declaration order."""
    hints = typing.get_type_hints(cls)
    return tuple((f, _kind_of(hints[f.name])) for f in dataclasses.fields(cls) if f.init)


def flag(field: dataclasses.Field) -> str:
    return field.metadata.get("cli") or "--" + field.name.replace("_", "-")


def _noun(field: dataclasses.Field) -> str:
    return field.metadata.get("noun") or field.name.replace("_", " ").removesuffix("s")


def _label(field: dataclasses.Field) -> str:
    name = flag(field)
    return name if name.lstrip("-").replace("-", "_") == field.name else f"{name} ({field.name})"


def _scalar(value, kind: Kind, field: dataclasses.Field):
    label = _label(field)
    base = kind.base
    if base is str and isinstance(value, os.PathLike):
        value = os.fspath(value)
    if isinstance(value, str) and base is not str:
        text = value.strip()
        try:
            if base is bool:
                if text.lower() not in ("true", "false", "1", "0", "yes", "no"):
                    raise ValueError
                value = text.lower() in ("true", "1", "yes")
            else:
                value = base(text)
        except ValueError:
            noun = {int: "an integer", float: "a number", bool: "true or false"}[base]
            raise ConfigError(f"{label} takes {noun}, not '{value}'") from None
    if base is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if base is float and hasattr(value, "item") and not isinstance(value, (int, float)):
        value = float(value)  # a numpy scalar
    if base is int and hasattr(value, "item") and not isinstance(value, (int, bool)):
        value = int(value)
    if not isinstance(value, base) or (base is int and isinstance(value, bool)):
        shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
        raise ConfigError(f"{label} takes {base.__name__}, not {type(value).__name__} {shown.splitlines()[0]}")
    if base is float and not math.isfinite(value):
        raise ConfigError(f"{label} must be a finite number, got {value}")
    if kind.choices is not None and value not in kind.choices:
        raise ConfigError(f"{label}: unknown {_noun(field)} '{value}'; choose one of "
                          f"{', '.join(map(str, kind.choices))}")
    low, high = field.metadata.get("min"), field.metadata.get("max")
    if low is not None and (value <= low if field.metadata.get("exclusive_min") else value < low):
        raise ConfigError(f"{label} must be {'>' if field.metadata.get('exclusive_min') else '>='} {low}, "
                          f"got {value}")
    if high is not None and value > high:
        raise ConfigError(f"{label} must be <= {high}, got {value}")
    return value


def coerce(value, field: dataclasses.Field, kind: Kind):
    """`value` as the field's type, or a one-line ConfigError naming the option."""
    if value is None:
        if kind.optional:
            return None
        raise ConfigError(f"{_label(field)} needs a value")
    if not kind.sequence:
        return _scalar(value, kind, field)
    aliases = field.metadata.get("aliases") or {}
    text = value if isinstance(value, str) else None
    if text is not None:
        if text.strip() in aliases:
            value = aliases[text.strip()]
        else:
            parts = text.split(",")
            value = [p.strip() if field.metadata.get("strip", True) else p for p in parts]
            value = [p for p in value if p != ""]
    try:
        items = tuple(value)
    except TypeError:
        raise ConfigError(f"{_label(field)} takes a comma-separated list, not {value!r}") from None
    if kind.choices is not None:
        unknown = [str(item) for item in items if item not in kind.choices]
        if unknown:
            raise ConfigError(f"{_label(field)}: unknown {_noun(field)}(s) "
                              f"{', '.join(unknown)}; choose from {', '.join(map(str, kind.choices))}"
                              + (f" (or {' | '.join(aliases)})" if aliases else ""))
    try:
        items = tuple(_scalar(item, kind, field) for item in items)
    except ConfigError:
        if text is None or kind.base not in (int, float) or kind.choices:
            raise
        noun = "integers such as 0,5,11" if kind.base is int else "numbers such as 0.1,0.5"
        raise ConfigError(f"{_label(field)} takes comma-separated {noun}, not '{text}'") from None
    if kind.length is not None and len(items) != kind.length:
        raise ConfigError(f"{_label(field)} takes exactly {kind.length} comma-separated values, got {len(items)}: "
                          f"{','.join(map(str, items)) or '(none)'}")
    return items


def validate(config) -> None:
    """Coerce and check every option field of `config` in place; then its own check(), if any."""
    for field, kind in fields_of(type(config)):
        object.__setattr__(config, field.name, coerce(getattr(config, field.name), field, kind))
    check = getattr(config, "check", None)
    if callable(check):
        check()


def as_dict(config) -> dict:
    """The options of a config as plain JSON-ready values (tuples as lists)."""
    return {f.name: list(v) if isinstance(v := getattr(config, f.name), tuple) else v
            for f, _ in fields_of(type(config))}


def key_of(cls, key) -> str | None:
    """The field name a key of a dict or file means: the field's name, or its flag without the
    leading dashes ("n-per-k", "lambda"); None when `cls` has no such option."""
    if not isinstance(key, str):
        return None
    for field, _ in fields_of(cls):
        if key == field.name or key == flag(field)[2:] or key.replace("-", "_") == field.name:
            return field.name
    return None


def from_dict(cls, data, *, what: str | None = None):
    """`cls(**data)` from plain values (lists for tuples, as as_dict writes them; keys may be field
    names or flags without dashes), every value checked as the constructor checks it. A key that is
    no option of `cls` is refused in one line naming it."""
    from collections.abc import Mapping

    what = what or cls.__name__
    if not isinstance(data, Mapping):
        raise ConfigError(f"{what} takes a mapping of option names to values, not {type(data).__name__}")
    values = {}
    for key, value in data.items():
        name = key_of(cls, key)
        if name is None:
            known = ", ".join(f.name for f, _ in fields_of(cls))
            raise ConfigError(f"{what}: unknown option {key!r}; its options are {known}")
        values[name] = value
    return cls(**values)


def help_of(field: dataclasses.Field) -> str:
    return field.metadata.get("help", "")
