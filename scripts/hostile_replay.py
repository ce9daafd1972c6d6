"""Replay hostile inputs against the command line and classify what each case did (issue 43 item 4).

    .venv/bin/python scripts/hostile_replay.py --out replay.json         # 484 cases, about 25 min on 2 cores
    .venv/bin/python scripts/hostile_replay.py --list                     # the cases, without running them
    .venv/bin/python scripts/hostile_replay.py --only 'results.json:nan' --out replay.csv

Once, in a work folder: a finished reference run (`geomprobe run --model tiny-neox --seed 1`, the
extract and geometry suites at test sizes), a one-job sweep and a four-step wind tunnel. Then each
case, one at a time: a fresh folder holding a copy of what the command reads, one file (or suite
folder) in it damaged one way, a sentinel folder beside it, and the command run there in its own
process group. Every outcome is one class:

    ok              exit 0 and the answer is the undamaged run's (numbers within 1e-9)
    one-line error  non-zero exit, no traceback, the message on at most 3 lines of stderr
    messy error     non-zero exit, no traceback, but no message or over 3 lines of one
    traceback       "Traceback" anywhere in stdout or stderr
    silent wrong    exit 0 and the answer differs from the undamaged run's, with no line naming
                    the damaged file (a command that only reads may answer less and say so; a
                    rerun must end with the reference numbers)
    damaged         a file outside the case's folder created, changed or deleted (the sentinel
                    folder that links point into, the reference trees, the hostile pickle's
                    marker), or the finished files changed by a command that only reads them
    hang            no exit within --timeout seconds (its process group is killed)

Answers are read with plain json and numpy here, never with geomprobe's readers. --out gets one
row a case (JSON or CSV by its suffix: id, file, mutation, command, class, first stderr line, why,
exit code, seconds, note); stdout gets the counts by class and the wall time.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import fnmatch
import hashlib
import json
import math
import os
import pickle
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

OK, ONE_LINE, MESSY, TRACEBACK, SILENT_WRONG, DAMAGED, HANG = (
    "ok", "one-line error", "messy error", "traceback", "silent wrong", "damaged", "hang")
CLASSES = (OK, ONE_LINE, MESSY, TRACEBACK, SILENT_WRONG, DAMAGED, HANG)

TOLERANCE = 1e-9
HUGE_BYTES = 3 * 2**29  # 1.5 GiB, sparse: over every size cap but the torch files'
DEPTH = 100_000
OUTPUT_CAP = 1 << 20  # bytes of a command's stdout or stderr kept for classifying it

# the reference run: extract and geometry at test sizes (about 10 s on two cores)
RUN_OPTIONS = ["--model", "tiny-neox", "--seed", "1", "--suite", "extract,geometry", "--limit", "12",
               "--null", "init:2", "--n-boot", "50", "--init-seeds", "1", "--n-null", "10",
               "--n-per-quintile", "0", "--step0", "off", "--quiet"]
CONFIG = {"n_boot": 50, "n_null": 10}  # --config files hold these two options instead of their flags
WT_OPTIONS = ["--task", "sula", "--steps", "4", "--d-model", "16", "--n-layers", "1", "--n-heads", "2",
              "--batch-size", "8", "--quiet"]
WT_RUN = ["--suite", "extract", "--prompts", "prompts.txt", "--limit", "12", "--n-boot", "50", "--seed", "1",
          "--out", "out", "--quiet"]
PROMPT_TEXTS = [f"The cat number {i} sat quietly on the old mat." for i in range(12)]

# The Python API as a script would call it: a geomprobe error is one line on stderr, exit 1
LOAD_RUN = """\
import json, sys
import geomprobe
from geomprobe.errors import GeomprobeError
try:
    run = geomprobe.load_run(sys.argv[1])
except GeomprobeError as error:
    sys.exit(f"error: {error}")
for note in run.notes:
    print(f"note: {note}", file=sys.stderr)
print(json.dumps({suite: run.results[suite] for suite in run.suites}))
"""
LOAD_EXTRACTION = """\
import hashlib, json, sys
import numpy as np
import geomprobe
from geomprobe.errors import GeomprobeError
digest = {}
try:
    for directory in sys.argv[1:]:
        ex = geomprobe.load_extraction(directory)
        for name, array in ex.arrays.items():
            data = np.ascontiguousarray(array)
            digest[f"{directory}/{name}"] = {"shape": list(data.shape), "dtype": str(data.dtype),
                                             "sha256": hashlib.sha256(data.tobytes()).hexdigest()}
except GeomprobeError as error:
    sys.exit(f"error: {error}")
print(json.dumps(digest))
"""
EXTRACTIONS = ["run/extraction", "run/geometry/extraction", "run/geometry/nulls/init-2000/extraction"]


# ------------------------------------------------------------------------------------------------
# the classifier: a pure function of what a case did

@dataclasses.dataclass
class Outcome:
    """What one case did, as the classifier sees it.

    returncode: the exit status, None when it was killed at the timeout. damage: changes outside the
    case's folder (or to the finished files, for a command that only reads), one line each. wrong:
    how the answer differs from the undamaged run's, one line each ([] when it is the same or was not
    checked). warned: a stderr line names the damaged file. reads_only: the command should only read
    (then an answer with less in it is right when a line says why)."""

    returncode: int | None
    stdout: str = ""
    stderr: str = ""
    damage: list[str] = dataclasses.field(default_factory=list)
    wrong: list[str] = dataclasses.field(default_factory=list)
    warned: bool = False
    reads_only: bool = False


def nonblank(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def classify(outcome: Outcome) -> tuple[str, str]:
    """(class, why) of one outcome; the order is the severity: damage, hang, traceback, the exit."""
    if outcome.damage:
        return DAMAGED, outcome.damage[0]
    if outcome.returncode is None:
        return HANG, "killed at the timeout"
    both = outcome.stdout + outcome.stderr
    if "Traceback" in both:
        last = [line for line in nonblank(both) if not line.startswith(" ")]
        return TRACEBACK, last[-1] if last else "Traceback"
    if outcome.returncode != 0:
        lines = nonblank(outcome.stderr)
        if 1 <= len(lines) <= 3:
            return ONE_LINE, lines[0]
        return MESSY, f"exit {outcome.returncode} with {len(lines)} lines on stderr"
    if outcome.wrong and not (outcome.reads_only and outcome.warned):
        return SILENT_WRONG, outcome.wrong[0]
    return OK, ""


# ------------------------------------------------------------------------------------------------
# answers, compared as flat {key: number or string} dicts

VOLATILE = re.compile(r"(seconds|per_second|_s|schema_version|format|pid|attempts)$")


def flatten(value, prefix: str = "", numbers_only: bool = True) -> dict:
    """{"a.b[2]": leaf} of a JSON value: its numbers (and strings unless numbers_only), without
    timings, process ids and format versions."""
    flat = {}
    if isinstance(value, dict):
        for key, item in value.items():
            if not VOLATILE.search(str(key)):
                flat.update(flatten(item, f"{prefix}.{key}", numbers_only))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            flat.update(flatten(item, f"{prefix}[{index}]", numbers_only))
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        flat[prefix] = value
    elif isinstance(value, str) and not numbers_only:
        flat[prefix] = value
    return flat


def same_value(expected, found) -> bool:
    if isinstance(expected, (int, float)) and isinstance(found, (int, float)) and not isinstance(found, bool):
        if math.isnan(expected) or math.isnan(found):
            return math.isnan(expected) and math.isnan(found)
        if math.isinf(expected) or math.isinf(found):
            return expected == found
        return abs(expected - found) <= TOLERANCE * max(1.0, abs(expected), abs(found))
    return expected == found


def differences(reference: dict, answer: dict | None, limit: int = 3) -> list[str]:
    """How `answer` differs from `reference` (every reference key must be there with its value;
    keys only the answer has are left out of account)."""
    if answer is None:
        return ["no answer to compare"]
    found = []
    for key, expected in reference.items():
        if key not in answer:
            found.append(f"{key} missing (reference {expected!r})")
        elif not same_value(expected, answer[key]):
            found.append(f"{key} is {answer[key]!r}, not {expected!r}")
        if len(found) >= limit:
            break
    return found


def read_regular(path: Path, cap: int = 64 << 20) -> bytes | None:
    """The bytes of a regular file (a link followed) of at most `cap` bytes; None for anything else,
    so that no FIFO or device is ever opened here."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode) or info.st_size > cap:
        return None
    return path.read_bytes()


def read_json(path: Path):
    data = read_regular(path)
    if data is None:
        return None
    try:
        return json.loads(data.decode("utf-8", errors="replace"))
    except (ValueError, RecursionError):
        return None


def results_answer(tree: Path) -> dict:
    """Numbers of every <suite>/results.json of a run directory (or of every run of a sweep)."""
    answer = {}
    for path in sorted(tree.glob("**/results.json")):
        data = read_json(path)
        if data is None:
            answer[f"{path.relative_to(tree)}"] = "unreadable"
            continue
        answer.update(flatten(data, str(path.relative_to(tree))))
    return answer


NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[+-]?\d+)?|nan|NaN|inf|Infinity")


def report_text(path: Path) -> str:
    """A report's page without plotly's library and the date it was made ("" when there is none)."""
    data = read_regular(path, cap=256 << 20)
    if data is None:
        return ""
    text = data.decode("utf-8", errors="replace")
    text = re.sub(r"<script type=\"text/javascript\">/\*\*.*?</script>", "", text, flags=re.S)
    return re.sub(r"generated \S+ by", "generated by", text)


def report_answer(path: Path) -> dict | None:
    """The numbers a report shows, in order."""
    text = report_text(path)
    return {f"number[{i}]": token for i, token in enumerate(NUMBER.findall(text))} if text else None


def table_answer(path: Path) -> dict | None:
    """The numbers of `geomprobe compare -o`'s table.json, each row keyed by run, suite and statistic."""
    table = read_json(path)
    if not isinstance(table, dict) or not isinstance(table.get("rows"), list):
        return None
    answer = {}
    for row in table["rows"]:
        if isinstance(row, dict):
            answer.update(flatten(row, f"{row.get('run')}|{row.get('suite')}|{row.get('statistic')}"))
    return answer


def stdout_json(stdout: str, numbers_only: bool = True) -> dict | None:
    try:
        return flatten(json.loads(stdout), numbers_only=numbers_only)
    except (ValueError, RecursionError):
        return None


def file_digest(path: Path) -> str:
    data = read_regular(path)
    return "unreadable" if data is None else hashlib.sha256(data).hexdigest()


# ------------------------------------------------------------------------------------------------
# commands

@dataclasses.dataclass(frozen=True)
class Command:
    """One way a user meets the damaged file. argv: the geomprobe arguments (or a python -c
    script), run in the case folder; tree: the reference tree the case folder holds a copy of
    (run, sweep or wt); answer(case_dir, stdout): what is compared with the undamaged case's."""

    key: str
    shown: str
    argv: tuple
    tree: str
    answer: object
    reads_only: bool = False
    says: object = None  # (case_dir, stdout) -> text besides stderr where a warning may be (a report's page)
    keeps_tree: bool | None = None  # whether the tree must stay as it is (default: reads_only)

    @property
    def writes_tree(self) -> bool:
        return not (self.reads_only if self.keeps_tree is None else self.keeps_tree)


def _geomprobe(*args) -> tuple:
    return ("-m", "geomprobe", *args)


def _run_answer(folder: str):
    return lambda case_dir, stdout: results_answer(case_dir / folder)


COMMANDS = {command.key: command for command in [
    Command("rerun", "geomprobe run (same options) --out run", _geomprobe("run", *RUN_OPTIONS, "--prompts",
            "prompts.txt", "--out", "run"), "run", _run_answer("run")),
    Command("rerun-jsonl", "geomprobe run (same options) --prompts prompts.jsonl --out run",
            _geomprobe("run", *RUN_OPTIONS, "--prompts", "prompts.jsonl", "--out", "run"), "run", _run_answer("run")),
    Command("rerun-config-json", "geomprobe run (same options) --config config.json --out run",
            _geomprobe("run", *[a for a in RUN_OPTIONS if a not in ("--n-boot", "50", "--n-null", "10")],
                       "--config", "config.json", "--prompts", "prompts.txt", "--out", "run"),
            "run", _run_answer("run")),
    Command("rerun-config-yaml", "geomprobe run (same options) --config config.yaml --out run",
            _geomprobe("run", *[a for a in RUN_OPTIONS if a not in ("--n-boot", "50", "--n-null", "10")],
                       "--config", "config.yaml", "--prompts", "prompts.txt", "--out", "run"),
            "run", _run_answer("run")),
    Command("report", "geomprobe report run -o report.html", _geomprobe("report", "run", "-o", "report.html"),
            "run", lambda case_dir, stdout: report_answer(case_dir / "report.html"), reads_only=True,
            says=lambda case_dir, stdout: report_text(case_dir / "report.html")),
    Command("compare", "geomprobe compare run run -o table", _geomprobe("compare", "run", "run", "-o", "table"),
            "run", lambda case_dir, stdout: table_answer(case_dir / "table.json"), reads_only=True,
            says=lambda case_dir, stdout: json.dumps((read_json(case_dir / "table.json") or {}).get("notes"))),
    Command("load_run", "python -c 'geomprobe.load_run(\"run\")'", ("-c", LOAD_RUN, "run"), "run",
            lambda case_dir, stdout: stdout_json(stdout), reads_only=True),
    Command("load_extraction", "python -c 'geomprobe.load_extraction(...)' on each extraction of run",
            ("-c", LOAD_EXTRACTION, *EXTRACTIONS), "run",
            lambda case_dir, stdout: stdout_json(stdout, numbers_only=False), reads_only=True),
    Command("validate-txt", "geomprobe prompts validate prompts.txt", _geomprobe("prompts", "validate", "prompts.txt"),
            "inputs", lambda case_dir, stdout: None, reads_only=True),
    Command("validate-jsonl", "geomprobe prompts validate prompts.jsonl",
            _geomprobe("prompts", "validate", "prompts.jsonl"), "inputs", lambda case_dir, stdout: None,
            reads_only=True),
    Command("status", "geomprobe sweep --status sweep", _geomprobe("sweep", "--status", "sweep"), "sweep",
            lambda case_dir, stdout: {"text": " ".join(stdout.split())}, reads_only=True,
            says=lambda case_dir, stdout: stdout),
    Command("status-json", "geomprobe sweep --status sweep --json", _geomprobe("sweep", "--status", "sweep", "--json"),
            "sweep", lambda case_dir, stdout: stdout_json(stdout, numbers_only=False), reads_only=True,
            says=lambda case_dir, stdout: stdout),
    Command("sweep-file", "geomprobe sweep --file sweep.toml (resumes sweep/)",
            _geomprobe("sweep", "--file", "sweep.toml", "--quiet"), "sweep", _run_answer("sweep")),
    Command("wt-run-step3", "geomprobe run --model wt@step-3 --suite extract --out out",
            _geomprobe("run", "--model", "./wt@step-3", *WT_RUN), "wt", _run_answer("out"), keeps_tree=True),
    Command("wt-run", "geomprobe run --model wt --suite extract --out out",
            _geomprobe("run", "--model", "./wt", *WT_RUN), "wt", _run_answer("out"), keeps_tree=True),
    Command("wt-resume", "geomprobe windtunnel train (same options) --out wt --resume",
            _geomprobe("windtunnel", "train", *WT_OPTIONS, "--out", "wt", "--resume"), "wt",
            lambda case_dir, stdout: {"model.safetensors": file_digest(case_dir / "wt" / "model.safetensors"),
                                      **flatten(read_json(case_dir / "wt" / "metrics.json"), "metrics")}),
    Command("wt-report", "geomprobe report wt -o report.html", _geomprobe("report", "wt", "-o", "report.html"),
            "wt", lambda case_dir, stdout: report_answer(case_dir / "report.html"), reads_only=True,
            says=lambda case_dir, stdout: report_text(case_dir / "report.html")),
]}


# ------------------------------------------------------------------------------------------------
# mutations: each changes one path of a case folder in place

class Payload:
    """Unpickled, it creates `marker` (outside the case folder): what a hostile pickle would do."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return os.system, (f"touch {self.marker}",)


PLACEHOLDER = "__hostile_number__"


def _first_number_path(value, path=()):
    """Keys to the first float of a JSON value (else its first integer), or None."""
    found_int = None
    stack = [(value, path)]
    while stack:
        item, where = stack.pop(0)
        if isinstance(item, float):
            return where
        if isinstance(item, int) and not isinstance(item, bool) and found_int is None:
            found_int = where
        if isinstance(item, dict):
            stack.extend((v, (*where, k)) for k, v in item.items())
        elif isinstance(item, list):
            stack.extend((v, (*where, i)) for i, v in enumerate(item))
    return found_int


def _set(value, path, new):
    for key in path[:-1]:
        value = value[key]
    value[path[-1]] = new


def _json_with(text: str, token: str) -> str:
    """The JSON text with its first number (a float where there is one) written as `token`."""
    data = json.loads(text)
    where = _first_number_path(data)
    if not where:
        raise ValueError("no number to replace")
    _set(data, where, PLACEHOLDER)
    return json.dumps(data, indent=2).replace(f'"{PLACEHOLDER}"', token, 1) + "\n"


def _after_first(data: bytes, anchor: bytes, insert: bytes) -> bytes:
    at = data.index(anchor) + len(anchor)
    return data[:at] + insert + data[at:]


NONFINITE = {  # mutation -> its token in JSON, YAML, TOML
    "nan": ("NaN", ".nan", "nan"),
    "infinity": ("Infinity", ".inf", "inf"),
    "1e999": ("1e999", "1.0e999", "1e999"),
}


def text_mutation(kind: str, mutation: str, data: bytes) -> bytes | None:
    """The damaged bytes of a text file of `kind` (json, jsonl, yaml, toml, txt), or None where the
    mutation means nothing for that kind. Pure: the file-system mutations are in mutate()."""
    text = data.decode("utf-8")
    deep = "[" * DEPTH + "]" * DEPTH
    if mutation == "invalid-utf8":
        anchor = {"yaml": b": ", "txt": b" "}.get(kind, b'"')
        return _after_first(data, anchor, b"\xff\xfe")
    if mutation == "lone-surrogate":
        if kind == "txt":
            return _after_first(data, b" ", b"\xed\xa0\x80")  # UTF-8 bytes of U+D800 (surrogatepass)
        if kind in ("yaml", "toml"):
            extra = 'zz_text: "\\ud800"\n' if kind == "yaml" else 'zz_text = "\\ud800"\n'
            return (extra + text if kind == "toml" else text + extra).encode()
        if b'": "' not in data:  # no string value: one added
            return text.replace("{", '{"zz_text": "\\ud800", ', 1).encode()
        return _after_first(data, b'": "', b"\\ud800")
    if mutation == "deep":
        if kind == "json":
            return (text.rstrip().removesuffix("}") + f', "deep": {deep}}}\n').encode()
        if kind == "jsonl":
            first, rest = text.split("\n", 1)
            return (first.rstrip().removesuffix("}") + f', "deep": {deep}}}\n' + rest).encode()
        if kind == "yaml":
            return (text + f"deep: {deep}\n").encode()
        if kind == "toml":
            return (f"deep = {deep}\n" + text).encode()
        return (deep + "\n" + text).encode()  # txt: brackets are a prompt like any other
    if mutation in NONFINITE:
        json_token, yaml_token, toml_token = NONFINITE[mutation]
        if kind == "json":
            return _json_with(text, json_token).encode()
        if kind == "jsonl":
            first, rest = text.split("\n", 1)
            return (first.rstrip().removesuffix("}") + f', "score": {json_token}}}\n' + rest).encode()
        if kind == "yaml":
            return re.sub(r": \d+", f": {yaml_token}", text, count=1).encode()
        if kind == "toml":
            return re.sub(r"= \d+", f"= {toml_token}", text, count=1).encode()
        return None
    if mutation == "wrong-type":
        if kind == "json":
            return f"[{text.strip()}]\n".encode()
        if kind == "jsonl":
            return ("[1, 2]\n" + text.split("\n", 1)[1]).encode()
        if kind == "yaml":
            return b"- n_boot\n- 50\n"
        return None
    if mutation == "unknown-keys":
        if kind == "json":
            return text.replace("{", '{"zz_unknown_key": "zz", ', 1).encode()
        if kind == "jsonl":
            return "\n".join(line.replace("{", '{"zz_unknown_key": "zz", ', 1) for line in text.split("\n")).encode()
        if kind == "yaml":
            return (text + "zz_unknown_key: zz\n").encode()
        if kind == "toml":
            return ('zz_unknown_key = "zz"\n' + text).encode()
        return None
    if mutation == "future-schema":
        if kind != "json":
            return None
        data_ = json.loads(text)
        key = next((k for k in ("schema_version", "format") if isinstance(data_, dict) and k in data_), None)
        if key is None:
            return None
        data_[key] = 99
        return (json.dumps(data_, indent=2) + "\n").encode()
    raise KeyError(mutation)


def _npy(path: Path):
    import numpy as np

    return np.load(path, allow_pickle=False)


def array_mutation(mutation: str, path: Path, marker: Path) -> bool:
    """Damage a .npy file in place; False where the mutation means nothing for its dtype."""
    import numpy as np

    array = _npy(path)
    if mutation == "pickle":
        np.save(path, np.array([Payload(marker), 1], dtype=object), allow_pickle=True)
    elif mutation == "object-dtype":
        np.save(path, np.array(["a", 1], dtype=object), allow_pickle=True)
    elif mutation == "nan-values":
        if array.dtype.kind != "f":
            return False
        np.save(path, np.full_like(array, np.nan))
    elif mutation == "edited-values":
        # finite, same shape and dtype, other numbers: seeded noise of half the array's spread (a scale,
        # even one per column, would leave the standardised spectra as they were); counts one more
        if array.dtype.kind == "f":
            noise = np.random.default_rng(0).standard_normal(array.shape)
            edited = array + 0.5 * float(array.std()) * noise
        else:
            edited = array + 1
        np.save(path, edited.astype(array.dtype))
    elif mutation == "wrong-shape":
        np.save(path, array[:-1])
    elif mutation == "huge":  # a valid header for 1.5 GiB of float32, the data a sparse hole
        path.unlink()
        np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(HUGE_BYTES // 4,)).flush()
    else:
        raise KeyError(mutation)
    return True


TEXT_KINDS = {".json": "json", ".jsonl": "jsonl", ".yaml": "yaml", ".toml": "toml", ".txt": "txt"}
PLACE_MUTATIONS = ("directory", "fifo", "dev-zero", "link-outside")


def mutate(path: Path, mutation: str, sentinel: Path, marker: Path) -> bool:
    """Damage `path` (a file, or a suite folder for link-outside) of a case folder in place.
    link-outside moves a copy of it into `sentinel` (outside the case folder) and links to that.
    False where the mutation means nothing for this file."""
    if mutation == "none":
        return True
    if mutation in PLACE_MUTATIONS:
        if mutation == "link-outside":
            outside = sentinel / "linked" / path.name
            outside.parent.mkdir(exist_ok=True)
            shutil.move(path, outside)
            path.symlink_to(outside, target_is_directory=outside.is_dir())
            return True
        path.unlink()
        if mutation == "directory":
            path.mkdir()
        elif mutation == "fifo":
            os.mkfifo(path)
        else:
            path.symlink_to("/dev/zero")
        return True
    data = path.read_bytes()
    if mutation == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif mutation == "empty":
        path.write_bytes(b"")
    elif mutation == "huge" and path.suffix != ".npy":
        with open(path, "ab") as file:
            file.truncate(HUGE_BYTES)  # the rest a sparse hole of NUL bytes
    elif mutation == "pickle" and path.suffix == ".pt":
        path.write_bytes(pickle.dumps(Payload(marker)))
    elif path.suffix == ".npy":
        return array_mutation(mutation, path, marker)
    else:
        damaged = text_mutation(TEXT_KINDS[path.suffix], mutation, data)
        if damaged is None:
            return False
        path.write_bytes(damaged)
    return True


def unfinish(run: Path, suite: str) -> None:
    """Make a finished suite look interrupted (its results.json gone, the manifest saying so), so that
    a rerun computes it again from what the folder holds (as tests/conftest.py's unfinish does)."""
    (run / suite / "results.json").unlink()
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["suites"][suite]["status"] = manifest["status"] = "interrupted"
    (run / "manifest.json").write_text(json.dumps(manifest, indent=2))


# ------------------------------------------------------------------------------------------------
# cases

@dataclasses.dataclass(frozen=True)
class Case:
    """One damaged path, one mutation, one command. expect: same (the answer of an undamaged case),
    invalid (the file is not valid: exit 0 is wrong), changed (a valid file with other content: the
    undamaged answer would be a stale one) or any (no answer to check). unfinished: the suite made to
    look interrupted first, so that the rerun reads what it saved."""

    target: str
    mutation: str
    command: str
    expect: str = "same"
    unfinished: str | None = None

    @property
    def id(self) -> str:
        mutation = self.mutation + (f"+unfinished-{self.unfinished}" if self.unfinished else "")
        return f"{self.target}:{mutation}:{self.command}"

    @property
    def baseline(self) -> Case:
        return Case("-", "none", self.command, unfinished=self.unfinished)


JSON_MUTATIONS = ("truncated", "empty", "invalid-utf8", "lone-surrogate", "deep", "nan", "infinity", "1e999",
                  "wrong-type", "unknown-keys", "future-schema", "directory", "fifo", "dev-zero", "link-outside",
                  "huge")
FILE_MUTATIONS = ("truncated", "empty", "directory", "fifo", "dev-zero", "link-outside", "huge")
NPY_MUTATIONS = ("truncated", "empty", "pickle", "object-dtype", "nan-values", "edited-values", "wrong-shape",
                 "directory", "fifo", "dev-zero", "link-outside", "huge")
PT_MUTATIONS = ("truncated", "empty", "pickle", "directory", "fifo", "dev-zero", "link-outside", "huge")
TXT_MUTATIONS = ("truncated", "empty", "invalid-utf8", "lone-surrogate", "deep", "directory", "fifo", "dev-zero",
                 "link-outside", "huge")

# Fewer mutations where a case loads a model (a rerun, a wind-tunnel run: about 10 s each on two
# shared cores, refused or not): the whole replay stays near 25 minutes.
SHORT = ("truncated", "invalid-utf8", "deep", "nan", "wrong-type", "unknown-keys", "future-schema", "fifo",
         "link-outside", "huge")
READERS = ("report", "compare", "load_run")

# (path in the case folder, mutations, commands, suite to unfinish first)
MATRIX = [
    ("run/manifest.json", JSON_MUTATIONS, READERS, None),
    ("run/manifest.json", ("truncated", "nan", "unknown-keys", "fifo", "link-outside", "huge"), ("rerun",), None),
    ("run/extract/results.json", JSON_MUTATIONS, READERS, None),
    ("run/extract/results.json", SHORT, ("rerun",), None),
    ("run/geometry/results.json", JSON_MUTATIONS, READERS, None),
    ("run/geometry/results.json", ("truncated", "nan", "directory", "link-outside"), ("rerun",), None),
    ("run/run.json", ("truncated", "directory", "fifo", "link-outside"), ("rerun",), None),
    ("run/extraction/meta.json", JSON_MUTATIONS, ("load_extraction",), None),
    ("run/extraction/meta.json", ("truncated", "deep", "nan", "wrong-type", "fifo", "link-outside"), ("rerun",),
     None),
    ("run/extraction/request.json", ("truncated", "nan", "wrong-type", "fifo", "link-outside"), ("rerun",), None),
    ("run/extraction/values.npy", NPY_MUTATIONS, ("load_extraction",), None),
    ("run/extraction/values.npy", ("truncated", "pickle", "nan-values", "directory", "fifo", "link-outside"),
     ("rerun",), None),
    ("run/extraction/values.npy", ("truncated", "pickle", "nan-values", "edited-values"), ("rerun",), "extract"),
    ("run/extraction/n_tokens.npy", ("truncated", "pickle", "edited-values", "wrong-shape", "fifo", "link-outside"),
     ("load_extraction",), None),
    ("run/extraction/n_tokens.npy", ("pickle", "wrong-shape", "link-outside"), ("rerun",), None),
    ("run/geometry/extraction/values.npy", NPY_MUTATIONS, ("load_extraction",), None),
    ("run/geometry/extraction/values.npy", ("pickle", "link-outside"), ("rerun",), None),
    ("run/geometry/extraction/values.npy", ("truncated", "pickle", "nan-values", "edited-values", "wrong-shape"),
     ("rerun",), "geometry"),
    ("run/geometry/nulls/init-2000/extraction/values.npy", ("truncated", "pickle", "edited-values", "link-outside"),
     ("rerun",), "geometry"),
    ("run/extract", ("link-outside",), ("rerun", *READERS), None),
    ("run/geometry", ("link-outside",), ("rerun", *READERS), None),
    ("run/extraction", ("link-outside",), ("rerun", "load_extraction"), None),
    ("run/geometry/nulls/init-2000", ("link-outside",), ("rerun",), "geometry"),
    ("prompts.txt", TXT_MUTATIONS, ("validate-txt", "rerun"), None),
    ("prompts.jsonl", JSON_MUTATIONS, ("validate-jsonl",), None),
    ("prompts.jsonl", SHORT, ("rerun-jsonl",), None),
    ("config.json", JSON_MUTATIONS, ("rerun-config-json",), None),
    ("config.yaml", ("truncated", "empty", "invalid-utf8", "lone-surrogate", "deep", "nan", "wrong-type",
                     "unknown-keys", "dev-zero", "huge"), ("rerun-config-yaml",), None),
    ("sweep.toml", JSON_MUTATIONS, ("sweep-file",), None),
    ("sweep/sweep.json", JSON_MUTATIONS, ("status", "status-json", "sweep-file"), None),
    ("sweep/logs/result-*.json", JSON_MUTATIONS, ("status-json",), None),
    ("sweep/runs/tiny-neox@main/manifest.json", JSON_MUTATIONS, ("status-json",), None),
    ("wt/checkpoints/step-0000003.pt", PT_MUTATIONS, ("wt-run-step3",), None),
    ("wt/checkpoints/state.pt", PT_MUTATIONS, ("wt-resume",), None),
    ("wt/metrics.json", JSON_MUTATIONS, ("wt-report",), None),
    ("wt/metrics.json", ("truncated", "nan", "wrong-type", "fifo", "link-outside", "huge"), ("wt-resume",), None),
    ("wt/windtunnel.json", ("truncated", "nan", "wrong-type", "unknown-keys", "fifo", "link-outside", "huge"),
     ("wt-run",), None),
    ("wt/config.json", ("truncated", "wrong-type", "fifo", "link-outside", "huge"), ("wt-run",), None),
]

# prompt files that stay valid (with other prompts, for `changed`) under a mutation
VALID_PROMPTS = {("prompts.txt", "truncated"): "changed", ("prompts.txt", "deep"): "changed",
                 ("prompts.txt", "link-outside"): "same", ("prompts.jsonl", "link-outside"): "same",
                 ("prompts.jsonl", "unknown-keys"): "same"}


def expectation(target: str, mutation: str, command: str) -> str:
    if target.startswith("prompts."):
        valid = VALID_PROMPTS.get((target, mutation))
        if command.startswith("validate"):
            return "any" if valid else "invalid"
        return valid or "same"
    return "same"


def applies(target: str, mutation: str, masters: Path | None) -> bool:
    """Whether the mutation means something for the file (checked on the reference file when the
    reference trees are built; without them every pair in the matrix is listed)."""
    if masters is None or not list(masters.glob(target)):  # a tree these cases do not need
        return True
    path = resolve(masters, target)
    if mutation in PLACE_MUTATIONS or mutation in ("truncated", "empty", "huge"):
        return True
    if path.suffix == ".npy":
        import numpy as np

        return mutation != "nan-values" or np.load(path, allow_pickle=False).dtype.kind == "f"
    if path.suffix == ".pt":
        return mutation == "pickle"
    try:
        return text_mutation(TEXT_KINDS[path.suffix], mutation, path.read_bytes()) is not None
    except ValueError:
        return False


def resolve(folder: Path, target: str) -> Path:
    """The path a target names in a folder (a * matched against the reference's one file)."""
    if "*" not in target:
        return folder / target
    found = sorted(folder.glob(target))
    if len(found) != 1:
        raise SystemExit(f"{target} matches {len(found)} files in {folder}, not one")
    return found[0]


def all_cases(masters: Path | None = None) -> list[Case]:
    cases = []
    for target, mutations, commands, unfinished in MATRIX:
        for mutation in mutations:
            if not applies(target, mutation, masters):
                continue
            for command in commands:
                cases.append(Case(target, mutation, command, expectation(target, mutation, command), unfinished))
    return cases


def with_baselines(cases: list[Case]) -> list[Case]:
    """Each command's undamaged case (per suite unfinished) first: its answer is the reference."""
    baselines = list(dict.fromkeys(case.baseline for case in cases))
    return baselines + [case for case in cases if case.mutation != "none"]


# ------------------------------------------------------------------------------------------------
# the reference trees, built once

def geomprobe_env(work: Path) -> dict:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "GEOMPROBE_CACHE": str(work / "cache"), "COLUMNS": "200",
           "TOKENIZERS_PARALLELISM": "false", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    env.pop("GEOMPROBE_WINDTUNNEL_STEPS", None)
    return env


def build_masters(work: Path, trees: set[str]) -> Path:
    """work/masters: prompts and config files, and the trees the cases need (run, sweep, wt)."""
    masters = work / "masters"
    masters.mkdir(parents=True, exist_ok=True)
    env = geomprobe_env(work)

    def geomprobe(*args):
        done = subprocess.run([sys.executable, "-m", "geomprobe", *args], cwd=masters, env=env,
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"building the reference failed: geomprobe {' '.join(args)}\n{done.stdout}{done.stderr}")

    (masters / "prompts.txt").write_text("\n".join(PROMPT_TEXTS) + "\n")
    (masters / "config.json").write_text(json.dumps(CONFIG, indent=2) + "\n")
    (masters / "config.yaml").write_text("".join(f"{key}: {value}\n" for key, value in CONFIG.items()))
    (masters / "sweep.toml").write_text(
        'models = ["tiny-neox"]\nsuites = "extract"\nout = "sweep"\nexecutor = "inline"\n\n[options]\n'
        f'seed = 1\nlimit = 12\nn_boot = 50\nprompts = "{masters / "prompts.txt"}"\n')
    if "run" in trees and not (masters / "run").exists():
        geomprobe("run", *RUN_OPTIONS, "--prompts", "prompts.txt", "--out", "run")
    if (masters / "run").exists():
        shutil.copy(masters / "run" / "prompts.jsonl", masters / "prompts.jsonl")  # the run's own records
    else:
        (masters / "prompts.jsonl").write_text("".join(json.dumps({"id": f"line-{i + 1}", "text": text}) + "\n"
                                                       for i, text in enumerate(PROMPT_TEXTS)))
    if "sweep" in trees and not (masters / "sweep").exists():
        geomprobe("sweep", "--file", "sweep.toml", "--quiet")
    if "wt" in trees and not (masters / "wt").exists():
        geomprobe("windtunnel", "train", *WT_OPTIONS, "--out", "wt")
    return masters


# ------------------------------------------------------------------------------------------------
# running one case

def tree_state(root: Path, skip: tuple[str, ...] = ()) -> dict[str, str]:
    """{relative path: what it is} of everything below root, links not followed and no FIFO or
    device opened: a regular file by its SHA-256 (over 16 MiB: size and mtime), a link by its target."""
    state = {}
    if not root.exists():
        return state
    for folder, folders, files in os.walk(root):
        for name in folders + files:
            if name in skip:
                continue
            path = os.path.join(folder, name)
            relative = os.path.relpath(path, root)
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                state[relative] = f"link to {os.readlink(path)}"
            elif stat.S_ISDIR(info.st_mode):
                state[relative] = "folder"
            elif not stat.S_ISREG(info.st_mode):
                state[relative] = f"special file {stat.S_IFMT(info.st_mode):o}"
            elif info.st_size > 16 << 20:
                state[relative] = f"{info.st_size} bytes, mtime {info.st_mtime_ns}"
            else:
                with open(path, "rb") as file:
                    state[relative] = hashlib.sha256(file.read()).hexdigest()
    return state


def changes(before: dict, after: dict, where: str) -> list[str]:
    lines = [f"{where}/{name} deleted" for name in before if name not in after]
    lines += [f"{where}/{name} created" for name in after if name not in before]
    lines += [f"{where}/{name} changed" for name in before if name in after and before[name] != after[name]]
    return lines


def _tail(path: Path) -> str:
    with open(path, "rb") as file:
        data = file.read(OUTPUT_CAP)
    return data.decode("utf-8", errors="replace")


def execute(argv: list[str], cwd: Path, env: dict, timeout: float, logs: Path) -> tuple[int | None, str, str, float]:
    """(exit status or None when killed at the timeout, stdout, stderr, seconds): one process group,
    killed whole at the timeout; stdout and stderr through files (a command may print without end)."""
    out_path, err_path = logs / "stdout", logs / "stderr"
    started = time.monotonic()
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        process = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                   start_new_session=True)
        try:
            returncode = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            returncode = None
    try:  # whatever it left running in its group
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    return returncode, _tail(out_path), _tail(err_path), time.monotonic() - started


def kept_damaged(case: Case, case_dir: Path, masters: Path) -> str:
    """After a rerun that exited 0: whether the damaged file is still unlike the reference's (a note:
    the class is decided by the results' numbers)."""
    path = resolve(case_dir, case.target)
    reference = resolve(masters, case.target)
    if not reference.is_file():
        return ""
    if path.suffix == ".npy":
        import numpy as np

        if read_regular(path, cap=HUGE_BYTES * 2) is None and not path.is_file():
            return f"{case.target} left as a non-file"
        try:
            same = np.array_equal(_npy(path), _npy(reference), equal_nan=True)
        except (OSError, ValueError):
            same = False
    elif path.suffix == ".json":
        found = read_json(path)
        same = found is not None and not differences(flatten(read_json(reference)), flatten(found))
    else:
        same = read_regular(path) == read_regular(reference)
    return "" if same else f"{case.target} left unlike the undamaged file"


def run_case(case: Case, index: int, work: Path, masters: Path, references: dict, timeout: float,
             keep: bool) -> dict:
    command = COMMANDS[case.command]
    folder = work / "cases" / f"{index:04d}"
    case_dir, sentinel, marker = folder / "case", folder / "sentinel", folder / "PAYLOAD_RAN"
    case_dir.mkdir(parents=True)
    sentinel.mkdir()
    (sentinel / "keep.txt").write_text("a file outside the case folder\n")
    for name in ("prompts.txt", "prompts.jsonl", "config.json", "config.yaml", "sweep.toml"):
        shutil.copy(masters / name, case_dir / name)
    if command.tree != "inputs":
        shutil.copytree(masters / command.tree, case_dir / command.tree, symlinks=True)
    if case.unfinished:
        unfinish(case_dir / "run", case.unfinished)
    if case.mutation != "none":
        mutate(resolve(case_dir, case.target), case.mutation, sentinel, marker)

    read_tree = case_dir / command.tree if not command.writes_tree and command.tree != "inputs" else None
    before_read = tree_state(read_tree, skip=(".geomprobe.lock",)) if read_tree else {}
    before_sentinel, before_folder = tree_state(sentinel), sorted(os.listdir(folder))
    before_work = sorted(os.listdir(work))

    logs = work / "logs"
    returncode, stdout, stderr, seconds = execute([sys.executable, *command.argv], case_dir, geomprobe_env(work),
                                                  timeout, logs)

    damage = []
    if marker.exists():
        damage.append("the hostile pickle ran (its marker file exists)")
    damage += changes(before_sentinel, tree_state(sentinel), "sentinel")
    damage += [f"{name} created beside the case folder" for name in sorted(set(os.listdir(folder)) -
                                                                        set(before_folder))]
    damage += [f"{name} created in the work folder" for name in sorted(set(os.listdir(work)) - set(before_work))]
    damage += changes(references["masters"], tree_state(masters), "reference")
    if read_tree is not None:
        damage += [f"{line} by a command that only reads" for line in
                   changes(before_read, tree_state(read_tree, skip=(".geomprobe.lock",)), command.tree)]

    wrong, note = [], ""
    if returncode == 0:
        answer = command.answer(case_dir, stdout)
        reference = references.get((case.command, case.unfinished))
        if case.mutation == "none":
            references[(case.command, case.unfinished)] = answer
        elif case.expect == "invalid":
            wrong = ["accepted a file that is not valid"]
        elif case.expect == "changed":
            if answer is not None and reference is not None and not differences(reference, answer):
                wrong = ["answered with the undamaged file's results for other prompts (stale)"]
        elif case.expect == "same" and reference is not None:
            wrong = differences(reference, answer)
        if command.writes_tree and case.mutation != "none" and case.target.startswith(command.tree + "/"):
            note = kept_damaged(case, case_dir, masters)
    # a line naming the damaged file, in stderr or the answer's own notes, more often than the undamaged case's
    name = Path(case.target).name
    said = stderr + (command.says(case_dir, stdout) if command.says and returncode == 0 else "")
    if case.mutation == "none":
        references[("mentions", case.command, case.unfinished)] = said
    warned = said.count(name) > references.get(("mentions", case.command, case.unfinished), "").count(name)
    outcome = Outcome(returncode, stdout, stderr, damage, wrong, warned, command.reads_only)
    verdict, why = classify(outcome)
    first = (nonblank(stderr) or nonblank(stdout) or [""])[0]
    if not keep:
        shutil.rmtree(folder, ignore_errors=True)
    return {"id": case.id, "file": case.target, "mutation": case.mutation + (
        f"+unfinished-{case.unfinished}" if case.unfinished else ""), "command": command.shown, "class": verdict,
        "first_stderr_line": first[:300], "why": why[:300], "exit": returncode, "seconds": round(seconds, 2),
        "note": note}


# ------------------------------------------------------------------------------------------------

def write_table(rows: list[dict], path: Path) -> None:
    partial = path.with_name(path.name + ".part")
    if path.suffix.lower() == ".csv":
        with open(partial, "w", newline="") as file:
            writer = csv.DictWriter(file, fieldnames=list(rows[0]) if rows else ["id"])
            writer.writeheader()
            writer.writerows(rows)
    else:
        counts = Counter(row["class"] for row in rows)
        partial.write_text(json.dumps({"counts": {c: counts[c] for c in CLASSES if counts[c]}, "cases": rows},
                                      indent=1) + "\n")
    os.replace(partial, path)


def selected(cases: list[Case], patterns: list[str]) -> list[Case]:
    if not patterns:
        return cases
    return [case for case in cases if any(fnmatch.fnmatchcase(case.id, f"*{p}*") for p in patterns)]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, help="the table of cases: .json or .csv")
    parser.add_argument("--only", action="append", default=[], metavar="PATTERN",
                        help="run the cases whose id (FILE:MUTATION:COMMAND) matches this glob (* allowed; "
                             "repeatable); each command's undamaged case runs too")
    parser.add_argument("--timeout", type=float, default=120, help="seconds a case may run (default 120)")
    parser.add_argument("--list", action="store_true", help="list the cases and stop")
    parser.add_argument("--work", type=Path, help="work folder (default: a new temporary one, removed at the end); "
                                                  "its reference trees are reused when there")
    parser.add_argument("--keep", action="store_true", help="keep every case folder (under WORK/cases)")
    args = parser.parse_args(argv)

    if args.list:
        cases = with_baselines(selected(all_cases(), args.only))
        for case in cases:
            print(f"{case.id}\t{COMMANDS[case.command].shown}")
        print(f"{len(cases)} cases", file=sys.stderr)
        return 0
    if args.out is None:
        parser.error("--out is required (or --list)")

    started = time.monotonic()
    work = args.work or Path(tempfile.mkdtemp(prefix="geomprobe-replay-"))
    work = work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(work / "cases", ignore_errors=True)
    (work / "cases").mkdir()
    (work / "logs").mkdir(exist_ok=True)
    wanted = selected(all_cases(), args.only)
    trees = {COMMANDS[case.command].tree for case in wanted}
    print(f"reference trees ({', '.join(sorted(trees))}) in {work}", file=sys.stderr)
    masters = build_masters(work, trees)
    cases = with_baselines(selected(all_cases(masters), args.only))
    references = {"masters": tree_state(masters)}

    rows = []
    try:
        for index, case in enumerate(cases):
            row = run_case(case, index, work, masters, references, args.timeout, args.keep)
            rows.append(row)
            write_table(rows, args.out)
            print(f"[{index + 1}/{len(cases)}] {row['class']:<14} {row['seconds']:6.1f} s  {case.id}", file=sys.stderr)
            if case.mutation == "none" and row["class"] != OK:
                raise SystemExit(f"the undamaged case of {case.command} is {row['class']}: {row['why']} "
                                 f"({row['first_stderr_line']}); no reference to compare with")
    finally:
        if args.work is None and not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    counts = Counter(row["class"] for row in rows)
    minutes = (time.monotonic() - started) / 60
    print(f"{len(rows)} cases in {minutes:.1f} min (table: {args.out})")
    for name in CLASSES:
        print(f"{counts[name]:5d}  {name}")
    noted = sum(1 for row in rows if row["note"])
    if noted:
        print(f"({noted} ok reruns left the damaged file unlike the undamaged one: see the note column)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
