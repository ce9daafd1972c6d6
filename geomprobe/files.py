"""Reading a file from disk, bounded: the one primitive every reader of geomprobe.readers is built on.

A read opens only a regular file (a directory, FIFO, device or socket is refused before it is
opened, and again from the open descriptor), reads at most its kind's size cap, decodes strict
UTF-8, and parses JSON with a nesting-depth cap checked before parsing, NaN and Infinity refused
or accepted as the kind says, and lone surrogates (a "\\ud800" escape without its pair) refused
with where they are. Every failure is one error class (FileProblem's subclasses) and one line that
names the file and the fix; the class raised also derives from the kind's geomprobe.errors class
(RunDirectoryError for a run's files, ConfigError for config files, PromptFileError for prompt
files), so existing `except` clauses keep catching it.

    from geomprobe.files import FileKind, read_json
    KIND = FileKind("run manifest", RunDirectoryError, max_bytes=16 << 20,
                    fix="rerun `geomprobe run` with --overwrite to start this run afresh")
    data = read_json(path, KIND)     # a value, or one of the errors below

Foundation layer: no torch, no scipy, no pydantic (geomprobe.readers adds the schemas).
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from geomprobe.errors import ConfigError, GeomprobeError, ModelNotFoundError, PromptFileError, RunDirectoryError

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30
DEFAULT_DEPTH = 64  # geomprobe's own files nest under 12 deep; 64 leaves room and stays far below Python's recursion limit


# ----------------------------------------------------------------------------------------------
# the failures: one class each, combined with the kind's geomprobe.errors class when raised


class FileProblem(GeomprobeError):
    """A file geomprobe refused to read; the message is one line naming the file and the fix."""


class MissingFile(FileProblem):
    """The file is not there."""


class NotRegularFile(FileProblem):
    """A directory, FIFO, device or socket where a regular file was expected."""


class UnreadableFile(FileProblem):
    """The operating system refused to read it (permissions, I/O error)."""


class FileTooLarge(FileProblem):
    """Larger than its kind's size cap."""


class NotUTF8(FileProblem):
    """Bytes that are not UTF-8 text."""


class NotJSON(FileProblem):
    """Text that is not JSON (or YAML, TOML) of the kind expected."""


class TooDeep(FileProblem):
    """Nested deeper than its kind's depth cap."""


class NonFiniteNumber(FileProblem):
    """NaN, Infinity or a number too large for a float, in a kind that refuses them."""


class LoneSurrogate(FileProblem):
    """A string holding half of a UTF-16 surrogate pair: not Unicode text."""


class SchemaMismatch(FileProblem):
    """Valid JSON whose values are not of the types its schema says (geomprobe.readers)."""


FAILURES = (MissingFile, NotRegularFile, UnreadableFile, FileTooLarge, NotUTF8, NotJSON, TooDeep, NonFiniteNumber,
            LoneSurrogate, SchemaMismatch)
# the geomprobe.errors class a kind's failures also derive from, and the prefix of their names
BASES = {RunDirectoryError: "RunFile", ConfigError: "ConfigFile", PromptFileError: "PromptFile",
         ModelNotFoundError: "ModelFile", GeomprobeError: "File"}
_CLASSES: dict[tuple[type, type], type] = {}
for _base, _prefix in BASES.items():
    for _failure in FAILURES:
        _name = _prefix + _failure.__name__
        _CLASSES[(_failure, _base)] = globals()[_name] = type(_name, (_failure, _base), {
            "__module__": __name__, "__doc__": f"{_failure.__doc__} ({_base.__name__})"})


def problem(failure: type[FileProblem], base: type[GeomprobeError], message: str) -> FileProblem:
    """The error for `failure` in a file whose kind raises `base` (both classes), its message on one line."""
    return _CLASSES.get((failure, base), failure)(" ".join(str(message).split()))


@dataclass(frozen=True)
class FileKind:
    """What one kind of file may be: its name in messages, the geomprobe.errors class its failures
    derive from, the size cap (bytes), the depth cap (nested arrays and objects), whether NaN and
    Infinity are accepted, and the fix a message ends with ({path} is filled in)."""

    name: str  # "run manifest", "config file"
    error: type[GeomprobeError]
    max_bytes: int
    fix: str
    max_depth: int = DEFAULT_DEPTH
    nonfinite: bool = False  # NaN / Infinity / 1e999 accepted (geomprobe's own results may hold them)
    bom: bool = False  # a leading UTF-8 byte-order mark is dropped (prompt files, config files)
    damaged: str | None = None  # "damaged": a content failure reads "{path} is damaged (not valid JSON: ...)"

    def fail(self, failure: type[FileProblem], path, what: str, fix: str | None = None,
             line: int | None = None) -> FileProblem:
        """The failure's error class for this kind, its message one line: `{path} {what}: {fix}`;
        `{path} line {line}: {what}` where a line is named; `{path} is {damaged} ({what})` for what
        the file holds when the kind names its damage."""
        fix = (fix if fix is not None else self.fix).replace("{path}", str(path))
        if line is not None:
            text = f"{path} line {line}: {what.removeprefix('is ')}"
        elif self.damaged and failure in CONTENT:
            text = f"{path} is {self.damaged} ({what.removeprefix('is ')})"
        else:
            text = f"{path} {what}"
        return problem(failure, self.error, text + (f": {fix}" if fix else ""))


CONTENT = (NotUTF8, NotJSON, TooDeep, NonFiniteNumber, LoneSurrogate, SchemaMismatch)  # what the bytes say


def size_words(n: int) -> str:
    for unit, size in (("GiB", GiB), ("MiB", MiB), ("KiB", KiB)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n} bytes"


def what_it_is(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


# ----------------------------------------------------------------------------------------------
# bytes and text


def read_bytes(path, kind: FileKind, fix: str | None = None, label: str | None = None) -> bytes:
    """The bytes of a regular file, at most kind.max_bytes of them. Symbolic links are followed to
    what they point at, which must be a regular file too; nothing else is opened (a FIFO or a
    device is refused from its stat, and again from the descriptor, opened non-blocking). label:
    how messages name the file (default its path; "--config FILE" for a command-line option)."""
    path = regular_file(path, kind, fix, label)
    shown = label or path
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as error:
        raise kind.fail(UnreadableFile, shown, f"cannot be read ({error.strerror or error})", fix) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):  # replaced between the stat and the open
            raise kind.fail(NotRegularFile, shown, f"is {what_it_is(mode)}, not a regular file", fix)
        chunks, total = [], 0
        while total <= kind.max_bytes:
            chunk = os.read(fd, min(1 << 20, kind.max_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    except OSError as error:
        raise kind.fail(UnreadableFile, shown, f"cannot be read ({error.strerror or error})", fix) from None
    finally:
        os.close(fd)
    if total > kind.max_bytes:  # grew while read
        raise _too_large(shown, kind, total, fix)
    return b"".join(chunks)


def regular_file(path, kind: FileKind, fix: str | None = None, label: str | None = None) -> Path:
    """`path` once its stat says it is a regular file within the kind's size cap (links followed):
    for a file another library opens itself (torch.load, safetensors), which would block on a FIFO
    or read a device without end, and read_bytes' first check. label: how messages name the file."""
    path = Path(path)
    shown = label or path
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise kind.fail(MissingFile, shown, "does not exist", fix) from None
    except OSError as error:
        raise kind.fail(UnreadableFile, shown, f"cannot be read ({error.strerror or error})", fix) from None
    if not stat.S_ISREG(info.st_mode):
        raise kind.fail(NotRegularFile, shown, f"is {what_it_is(info.st_mode)}, not a regular file", fix)
    if info.st_size > kind.max_bytes:
        raise _too_large(shown, kind, info.st_size, fix)
    return path


def _too_large(path, kind: FileKind, size: int, fix: str | None) -> FileProblem:
    return kind.fail(FileTooLarge, path, f"is {'over ' if size > kind.max_bytes else ''}{size_words(size)}, more "
                     f"than a {kind.name} can be ({size_words(kind.max_bytes)})", fix)


def decode(data: bytes, path, kind: FileKind, fix: str | None = None) -> str:
    """UTF-8 text, strictly (a byte-order mark dropped where the kind allows one); invalid bytes are
    NotUTF8 naming the line and the byte of the line."""
    bom = kind.bom and data.startswith(b"\xef\xbb\xbf")
    try:
        return data.decode("utf-8-sig" if bom else "utf-8")
    except UnicodeDecodeError as error:
        start = error.start + (3 if bom else 0)
        line = data.count(b"\n", 0, start) + 1
        column = start - (data.rfind(b"\n", 0, start) + 1) + 1
        raise kind.fail(NotUTF8, path, f"is not UTF-8 text ({error.reason} at byte {column} of the line)", fix,
                        line=line) from None


def read_text(path, kind: FileKind, fix: str | None = None, label: str | None = None) -> str:
    """read_bytes, then decode."""
    return decode(read_bytes(path, kind, fix, label), label or path, kind, fix)


# ----------------------------------------------------------------------------------------------
# JSON


_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_BRACKETS = str.maketrans("[]{}", "()()")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_CONSTANT = re.compile(r"-?\b(?:NaN|Infinity)\b")


def json_depth(text: str, limit: int) -> int:
    """How deep arrays and objects nest in JSON text, counted up to limit + 1 (no further): the
    brackets outside strings, innermost pairs removed a level at a time (C-speed string work, no
    recursion). Texts with no more brackets than the limit are not scanned."""
    if text.count("[") + text.count("{") <= limit:
        return 0
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text)).translate(_BRACKETS)
    if "(" * (limit + 1) in brackets:  # the usual deep file: one run of openers (found at C speed)
        return limit + 1
    depth = 0
    while "()" in brackets and depth <= limit:
        brackets = brackets.replace("()", "")
        depth += 1
    return depth


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, max(index, 0)) + 1


class _Refused(Exception):
    def __init__(self, what: str):
        self.what = what


def _refuse_constant(name: str):
    raise _Refused(name)


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Refused(text)
    return value


# NaN and Infinity accepted as Python parses them, or refused: the constants and any float literal
# that overflows to infinity (1e999), checked as each is parsed
_DECODERS = {True: json.JSONDecoder(), False: json.JSONDecoder(parse_constant=_refuse_constant,
                                                                parse_float=_finite_float)}


def scan(text: str) -> bool:
    """Whether JSON text may hold a lone surrogate's escape: computed once for a whole JSON-lines
    file and handed to loads for each of its lines."""
    return "\\u" in text and _SURROGATE_ESCAPE.search(text) is not None


def loads(text: str, path, kind: FileKind, fix: str | None = None, line: int | None = None, *,
          scanned: bool | None = None, syntax_fix: str | None = None):
    """The JSON value of `text` (read from `path`; `line`: the line of a JSON-lines file it is),
    checked: depth (TooDeep), syntax (NotJSON), NaN/Infinity/overflowing numbers unless the kind
    accepts them (NonFiniteNumber), lone surrogates (LoneSurrogate). `scanned`: scan() of a text
    that holds `text` (a whole JSON-lines file), so that each line is not searched again;
    syntax_fix: the fix a syntax error ends with, where it differs from `fix`."""
    depth = json_depth(text, kind.max_depth)
    if depth > kind.max_depth:
        raise kind.fail(TooDeep, path, f"nests arrays and objects over {kind.max_depth} deep, deeper than a "
                        f"{kind.name} may", fix, line)
    try:
        value = _DECODERS[kind.nonfinite].decode(text)
    except _Refused as refused:
        found = _CONSTANT.search(text) if refused.what in ("NaN", "Infinity", "-Infinity") else None
        at = f" (line {_line_of(text, found.start())})" if found and line is None else ""
        raise kind.fail(NonFiniteNumber, path, f"holds {refused.what[:40]}{at}, which a {kind.name} may not hold (JSON "
                        "numbers only, no NaN or Infinity)", fix, line) from None
    except json.JSONDecodeError as error:
        at = f"column {error.colno}" if line is not None else f"line {error.lineno}, column {error.colno}"
        raise kind.fail(NotJSON, path, f"is not valid JSON: {error.msg} ({at})",
                        syntax_fix if syntax_fix is not None else fix, line) from None
    except RecursionError:  # the depth check should have caught it; never a traceback
        raise kind.fail(TooDeep, path, f"nests too deep to read, deeper than a {kind.name} may ({kind.max_depth})",
                        fix, line) from None
    except ValueError as error:  # an integer of more digits than Python converts
        raise kind.fail(NotJSON, path, f"is not valid JSON: {str(error).splitlines()[0][:80]}", fix, line) from None
    if scan(text) if scanned is None else scanned:
        check_strings(value, path, kind, fix, text=text, line=line)
    return value


def read_json(path, kind: FileKind, fix: str | None = None, label: str | None = None):
    """The JSON value a file holds: read_text, then loads."""
    return loads(read_text(path, kind, fix, label), label or path, kind, fix)


# ----------------------------------------------------------------------------------------------
# values parsed by another parser (YAML, TOML) or by json: checked without recursion


def _lone_surrogate(text: str) -> int | None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        return error.start
    return None


def _where(keys: list) -> str:
    return "".join(f"[{k!r}]" if not isinstance(k, int) else f"[{k}]" for k in keys) or "the top level"



def _surrogate_error(string: str, index: int, path, kind: FileKind, fix: str | None, line: int | None = None,
                     at: str = "") -> FileProblem:
    code = f"\\u{ord(string[index]):04x}"
    return kind.fail(LoneSurrogate, path, f"holds a lone surrogate{at} ({code}, half of a UTF-16 pair), which is not "
                     "Unicode text", fix or "remove it, or write the character it was meant to be", line)


def check_strings(value, path, kind: FileKind, fix: str | None = None, text: str | None = None,
                  line: int | None = None) -> None:
    """Refuse a lone surrogate anywhere in `value` (keys included), naming where: the line of the
    JSON text when `text` is given, else the keys that lead to it."""
    stack = [(value, ())]
    while stack:
        item, keys = stack.pop()
        if isinstance(item, dict):
            strings = [(key, keys) for key in item if isinstance(key, str)]
            stack += [(child, keys + (key,) if len(keys) < 6 else keys) for key, child in item.items()]
        elif isinstance(item, (list, tuple)):
            stack += [(child, keys + (i,) if len(keys) < 6 else keys) for i, child in enumerate(item)]
            continue
        elif isinstance(item, str):
            strings = [(item, keys)]
        else:
            continue
        for string, at in strings:
            index = _lone_surrogate(string)
            if index is None:
                continue
            code = f"\\u{ord(string[index]):04x}"
            found = re.search(re.escape(code), text, re.IGNORECASE) if text is not None and line is None else None
            raise _surrogate_error(string, index, path, kind, fix, line if line is not None else (
                _line_of(text, found.start()) if found else None), "" if found or not at else f" at {_where(list(at))}")


def check_tree(value, path, kind: FileKind, fix: str | None = None, max_items: int = 1_000_000) -> None:
    """What loads checks, for a value another parser made (YAML, TOML): depth, NaN/Infinity unless
    accepted, lone surrogates, and at most max_items values in all. Walked with a stack, no recursion."""
    stack = [(value, 0, ())]
    count = 0
    while stack:
        item, depth, keys = stack.pop()
        count += 1
        if count > max_items:
            raise kind.fail(FileTooLarge, path, f"holds over {max_items:,} values, more than a {kind.name} can hold", fix)
        if isinstance(item, (dict, list, tuple)):
            if depth >= kind.max_depth:
                raise kind.fail(TooDeep, path, f"nests over {kind.max_depth} deep at {_where(list(keys[:6]))}, deeper "
                                f"than a {kind.name} may", fix)
            children = item.items() if isinstance(item, dict) else enumerate(item)
            for key, child in children:
                if isinstance(key, str) and _lone_surrogate(key) is not None:
                    raise _surrogate_error(key, _lone_surrogate(key), path, kind, fix, at=f" at {_where(list(keys[:6]))}")
                stack.append((child, depth + 1, keys + (key,) if depth < 6 else keys))
        elif isinstance(item, float) and not math.isfinite(item) and not kind.nonfinite:
            raise kind.fail(NonFiniteNumber, path, f"holds {item} at {_where(list(keys[:6]))}, which a {kind.name} may "
                            "not hold", fix)
        elif isinstance(item, str) and _lone_surrogate(item) is not None:
            raise _surrogate_error(item, _lone_surrogate(item), path, kind, fix, at=f" at {_where(list(keys[:6]))}")


def load_yaml(text: str, path, kind: FileKind, fix: str | None = None):
    """The value of YAML text with PyYAML's safe loader (no tags that build Python objects), without
    aliases (a config has no use for them, and they make bombs and cycles), then check_tree.
    ImportError when PyYAML is not installed (the caller says how to install it)."""
    import yaml

    class Loader(yaml.SafeLoader):
        def compose_node(self, parent, index):
            if self.check_event(yaml.AliasEvent):
                event = self.peek_event()
                raise yaml.composer.ComposerError(None, None, f"an alias (*{event.anchor}): write the value out",
                                                  event.start_mark)
            return super().compose_node(parent, index)

    try:
        value = yaml.load(text, Loader=Loader)  # noqa: S506 - a SafeLoader subclass
    except RecursionError:
        raise kind.fail(TooDeep, path, f"nests too deep to read, deeper than a {kind.name} may ({kind.max_depth})",
                        fix) from None
    except yaml.YAMLError as error:
        raise kind.fail(NotJSON, path, f"is not valid YAML ({' '.join(str(error).split())[:200]})", fix) from None
    except (ValueError, TypeError, OverflowError) as error:  # a timestamp or number PyYAML cannot convert
        raise kind.fail(NotJSON, path, f"is not valid YAML ({' '.join(str(error).split())[:120]})", fix) from None
    check_tree(value, path, kind, fix)
    return value


def load_toml(text: str, path, kind: FileKind, fix: str | None = None):
    """The table of TOML text (tomllib, or tomli on Python 3.10: ImportError without it), then check_tree."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib
    try:
        value = tomllib.loads(text)
    except RecursionError:
        raise kind.fail(TooDeep, path, f"nests too deep to read, deeper than a {kind.name} may ({kind.max_depth})",
                        fix) from None
    except (tomllib.TOMLDecodeError, ValueError) as error:
        raise kind.fail(NotJSON, path, f"is not valid TOML ({' '.join(str(error).split())[:200]})", fix) from None
    check_tree(value, path, kind, fix)
    return value
