"""Every file reader fed random and mutated bytes (issue 43): the reader returns a value or raises a
GeomprobeError whose message is one line; never another exception, never a hang (a per-example
deadline, and an alarm for a reader that never returns), never a file touched outside the example's
own folder (the rest of tmp_path is compared before and after each example).

Each reader starts from a valid file of its kind, then mutates it: the JSON value (a key's value
replaced by another type, a key removed or added, a future schema_version, NaN/Infinity, huge
numbers, lone surrogates, nesting 65 to 100,000 deep) and the bytes (truncated, bytes flipped or
inserted, invalid UTF-8), or replaces it with random bytes. Devices, FIFOs, directories and links
to them are the deterministic cases at the end.

Two tiers: the default run (FAST examples per reader, derandomized, a few seconds in all, in `make
test` and `make test-fast`) and the soak (@pytest.mark.fuzz, SLOW = 10,000 examples per reader,
about 14 minutes of one core: `make fuzz`, which CI runs after `make test`). GEOMPROBE_FUZZ_EXAMPLES
sets both for a longer hunt."""

from __future__ import annotations

import functools
import json
import os
import signal
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import geomprobe.readers  # noqa: F401 - imported at collection: the first example does not pay for pydantic
import geomprobe.schemas  # noqa: F401
import geomprobe.suites.reading  # noqa: F401
import geomprobe.sweep.status  # noqa: F401
from geomprobe.errors import GeomprobeError

FAST = int(os.environ.get("GEOMPROBE_FUZZ_EXAMPLES", 200))
SLOW = int(os.environ.get("GEOMPROBE_FUZZ_EXAMPLES", 10_000))
HANG_S = 20  # an example still running after this is a hang (the deadline catches slow ones first)
DEADLINE = timedelta(seconds=5)  # a loaded 2-core machine: generous; a hang is what it must catch


# ------------------------------------------------------------------------------------------------
# the readers, each with a valid file of its kind


MANIFEST = {
    "created": "2026-01-01T00:00:00+00:00", "fingerprint": "e5ab0d31b53f39b0",
    "config": {"model": "tiny-neox", "revision": None, "dtype": "float32", "seed": 0,
               "model_identity": {"kind": "local", "files": ["config.json"], "sha256": "8b489b5fa8f1a109"}},
    "status": "complete", "started": "2026-01-01T00:00:00+00:00", "ended": "2026-01-01T00:00:01+00:00",
    "command": "geomprobe run --model tiny-neox", "versions": {"python": "3.11.7", "torch": "2.13.0+cpu"},
    "geomprobe_commit": None,
    "model": {"spec": "tiny-neox", "source": "/nonexistent/tiny-neox", "revision": None, "commit": None,
              "family": "gpt_neox", "shape": {"n_layers": 4, "n_heads": 8}},
    "backend": "hf", "dtype": "float32", "seed": 0,
    "suites": {"extract": {"status": "complete", "started": "2026-01-01T00:00:00+00:00", "options": {"n_boot": 1000},
                           "run_config": {"model": "tiny-neox"}, "readouts": ["values"],
                           "prompts": {"source": "p.txt", "n": 6, "sha256": "ab"}}},
}
RESULTS = {"schema_version": 3, "suite": "extract", "model": "tiny-neox", "geomprobe_version": "0.1.0", "n_prompts": 6,
           "layers": [{"layer": 0, "attn_entropy_bits": 3.43, "ci95": [3.40, 3.45]},
                      {"layer": 1, "attn_entropy_bits": 3.85, "ci95": [3.81, 3.87]}]}
RUN_DOCUMENT = {"document": "geomprobe run", "schema_version": 1, "run_dir": "run", "status": "complete",
                "config": MANIFEST["config"], "model": MANIFEST["model"], "verdict": None,
                "evidence": {"state": "not tested"}, "notes": [],
                "suites": {"extract": {"status": "complete", "options": {"n_boot": 1000}, "seconds": 1.5,
                                       "headlines": [{"header": "entropy", "value": 3.4}], "results": RESULTS}}}
META = {"model": "tiny-neox", "n_prompts": 2, "layers": [0, 1], "readouts": ["values"], "tokens": [], "token_ids": [],
        "backend": "hf", "shape": {"n_layers": 2}, "family": "gpt_neox", "prompts_sha256": "2b8a", "max_tokens": None,
        "shapes": {"n_tokens": [2]}, "model_identity": {"kind": "local", "sha256": "8b48"}}
REQUEST = {"prompts_sha256": "2b8a", "layers": None, "model_identity": {"kind": "local"}, "readouts": ["values"],
           "tokens": [], "backend": "hf", "max_tokens": None}
CONFIG = {"suite": "sula", "model": "tiny-neox", "n_per_k": 5, "alpha": 0.8, "layers": [0, 1], "seed": 3}
SWEEP = {"format": 1, "created": "2026-01-01T00:00:00+00:00", "command": "geomprobe sweep",
         "spec": {"models": ["tiny-neox"], "revisions": None, "suites": "extract", "options": {"n_boot": 20},
                  "skip_unsupported": False, "suite_options": {"extract": {"n_boot": 20}}, "executor": "inline"},
         "jobs": [{"name": "tiny-neox@main", "model": "tiny-neox", "revision": None, "suites": ["extract"],
                   "run_dir": "runs/tiny-neox@main", "expect": {"model": "tiny-neox", "seed": 0},
                   "status": "complete", "error": None, "seconds": 6.04, "job_id": None, "attempts": 1}],
         "history": []}
SWEEP_FILE = {"models": ["tiny-neox", "tiny-llama"], "suites": "extract", "out": "sweeps/x",
              "options": {"n_boot": 20, "seed": 1}, "executor": "inline"}
JOB_RESULT = {"status": "failed", "error": "one line", "seconds": 2.5, "host": "vm", "pid": 42, "gpus": None}
METRICS = {"task": "sula", "arch": "transformer", "steps": 4, "train_seconds": 1.5, "final_train_loss": 0.67,
           "eval": {"train_length": {"entropy_mae_bits": 0.01, "kl_bits": 0.02, "mass_on_feasible": 0.99}},
           "history": [{"step": 1, "loss": 1.2}, {"step": 4, "loss": 0.7}],
           "config": {"task": "sula", "task_options": {}, "arch": "transformer", "spec": {"d_model": 16}, "seed": 0,
                      "steps": 4, "eval_lengths": None}}
WINDTUNNEL = {"task": "sula", "task_options": {}, "arch": "transformer", "vocab_size": 63, "answer_ids": [7, 8]}
MODEL_CONFIG = {"model_type": "gpt_neox", "hidden_size": 128, "num_hidden_layers": 4, "architectures": ["X"]}
PROMPTS = [{"id": "a", "text": "The cat sat on the mat.", "domain": "x", "source": "y"}, {"id": 2, "text": "A dog ran."}]
ROWS = [{"id": "a", "pc1": 0.5, "H_model": 1.2}, {"id": "b", "pc1": None}]


def _json(value) -> bytes:
    return json.dumps(value, indent=1).encode()


def _jsonl(rows) -> bytes:
    return "".join(json.dumps(row) + "\n" for row in rows).encode()


def _yaml(value) -> bytes:
    import yaml

    return yaml.safe_dump(value).encode()


def _toml(value) -> bytes:
    lines, tables = [], []
    for key, item in value.items():
        (tables if isinstance(item, dict) else lines).append((key, item))
    text = "".join(f"{key} = {json.dumps(item)}\n" for key, item in lines)
    for key, table in tables:
        text += f"[{key}]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in table.items())
    return text.encode()


def _read_run(folder: Path, name: str):
    from geomprobe.suites.reading import read_run

    return read_run(folder)


def _report_run(folder: Path, name: str):
    from geomprobe.report.rundata import load_run

    return load_run(folder)


def _load_extraction(folder: Path, name: str):
    from geomprobe.extraction import load_extraction

    return load_extraction(folder / "extraction")


def _extraction_folder(folder: Path) -> None:
    directory = folder / "extraction"
    directory.mkdir()
    np.save(directory / "n_tokens.npy", np.array([3, 4], dtype=np.int32))
    (directory / "prompts.jsonl").write_bytes(_jsonl(PROMPTS))


def _run_folder(folder: Path) -> None:
    (folder / "extract").mkdir()
    (folder / "manifest.json").write_bytes(_json(MANIFEST))
    (folder / "extract" / "results.json").write_bytes(_json(RESULTS))


def _sweep_result(folder: Path, name: str):
    from geomprobe.sweep.job import read_result

    value = read_result(folder, {"token": "0" * 32})
    assert value is None or value["status"] in ("complete", "failed")
    return value


def _reader(dotted: str):
    module, _, name = dotted.rpartition(".")

    def read(folder: Path, file: str):
        import importlib

        return getattr(importlib.import_module(module), name)(folder / file)

    return read


def _config_options(folder: Path, name: str):
    from geomprobe.commandline import config_file_options

    return config_file_options(folder / name)


def _checkpoints(folder: Path, name: str):
    from geomprobe.models.loading import windtunnel_checkpoints

    return windtunnel_checkpoints(folder)


def _training_folder(folder: Path) -> None:
    (folder / "windtunnel.json").write_bytes(_json(WINDTUNNEL))
    (folder / "checkpoints").mkdir()
    for step in (2, 4, 9):
        (folder / "checkpoints" / f"step-{step:07d}.pt").write_bytes(b"weights")


# name -> (how to read, the file's path in the example's folder, its valid bytes, what else the folder holds)
READERS = {
    "manifest": (_reader("geomprobe.readers.read_manifest"), "manifest.json", lambda: _json(MANIFEST), None),
    "run directory manifest": (lambda folder, name: __import__("geomprobe.rundir", fromlist=["x"]).RunDirectory(
        folder).read_manifest(), "manifest.json", lambda: _json(MANIFEST), None),
    "results": (_reader("geomprobe.readers.read_results"), "results.json", lambda: _json(RESULTS), None),
    "run (manifest)": (_read_run, "manifest.json", lambda: _json(MANIFEST), _run_folder),
    "run (results)": (_read_run, "extract/results.json", lambda: _json(RESULTS), _run_folder),
    "report run (results)": (_report_run, "extract/results.json", lambda: _json(RESULTS), _run_folder),
    "run document": (_reader("geomprobe.readers.read_run_document"), "run.json", lambda: _json(RUN_DOCUMENT), None),
    "extraction meta": (_reader("geomprobe.readers.read_extraction_meta"), "meta.json", lambda: _json(META), None),
    "load_extraction (meta)": (_load_extraction, "extraction/meta.json", lambda: _json(META), _extraction_folder),
    "extraction request": (_reader("geomprobe.readers.read_extraction_request"), "request.json",
                           lambda: _json(REQUEST), None),
    "config (JSON)": (_config_options, "config.json", lambda: _json(CONFIG), None),
    "config (YAML)": (_config_options, "config.yaml", lambda: _yaml(CONFIG), None),
    "prompts (JSONL)": (_reader("geomprobe.prompts.read_prompts"), "prompts.jsonl", lambda: _jsonl(PROMPTS), None),
    "prompts (text)": (_reader("geomprobe.prompts.read_prompts"), "prompts.txt",
                       lambda: b"The cat sat on the mat.\n\nA dog ran.\n", None),
    "sweep.json": (lambda folder, name: __import__("geomprobe.sweep.status", fromlist=["x"]).status_rows(folder),
                   "sweep.json", lambda: _json(SWEEP), None),
    "sweep file (TOML)": (_reader("geomprobe.sweep.spec.read_sweep_file"), "sweep.toml", lambda: _toml(SWEEP_FILE),
                          None),
    "sweep file (YAML)": (_reader("geomprobe.sweep.spec.read_sweep_file"), "sweep.yaml", lambda: _yaml(SWEEP_FILE),
                          None),
    "sweep file (JSON)": (_reader("geomprobe.sweep.spec.read_sweep_file"), "sweep.json", lambda: _json(SWEEP_FILE),
                          None),
    "job result": (_sweep_result, "logs/result-" + "0" * 32 + ".json", lambda: _json(JOB_RESULT), None),
    "wind-tunnel metrics": (_reader("geomprobe.readers.read_metrics"), "metrics.json", lambda: _json(METRICS), None),
    "windtunnel.json": (_reader("geomprobe.readers.read_windtunnel_info"), "windtunnel.json",
                        lambda: _json(WINDTUNNEL), None),
    "checkpoints index (metrics)": (_checkpoints, "metrics.json", lambda: _json(METRICS), _training_folder),
    "checkpoints index (windtunnel.json)": (_checkpoints, "windtunnel.json", lambda: _json(WINDTUNNEL),
                                            _training_folder),
    "model config.json": (_reader("geomprobe.readers.read_model_config"), "config.json", lambda: _json(MODEL_CONFIG),
                          None),
    "rows (JSONL)": (_reader("geomprobe.readers.read_rows"), "rows.jsonl", lambda: _jsonl(ROWS), None),
}


# ------------------------------------------------------------------------------------------------
# mutations


# Every choice below is made through `rnd`, a random.Random that Hypothesis hands the example
# (st.randoms): its draws are Hypothesis's own, so a failure is replayed and shrunk like any other,
# at a fraction of the cost of one st.data() draw per choice.

SURROGATES = ["\ud800", "\udc00", "\udfff", "x\ud83d", "\ude00y"]
ODD_TEXT = ["", " ", "\x00", "\u2028", "../../etc", "é" * 5, "text", "schema_version", "suites", "jobs", "layers"]
NUMBERS = [float("nan"), float("inf"), -float("inf"), 10**400, 2**63, -1, 0, 1.5, -0.0, 10**30, 1e308]
DEEP = "__geomprobe_deep__"  # a string value replaced by deep nesting in the text (json.dumps would recurse)
HUGE_TEXT = {"1e999": "1e999", "-1e400": "-1e400", "digits": "9" * 5000, "NaN": "NaN", "Infinity": "-Infinity"}


def random_text(rnd) -> str:
    pick = rnd.random()
    if pick < 0.3:
        return rnd.choice(SURROGATES)
    if pick < 0.7:
        return rnd.choice(ODD_TEXT)
    return "".join(chr(rnd.choice([rnd.randint(32, 126), rnd.randint(0, 0x10FFFF)])) for _ in range(rnd.randint(0, 8)))


def random_value(rnd, depth: int = 0):
    """A JSON value (NaN, Infinity, surrogates, huge numbers included), at most 3 deep."""
    kind = rnd.randint(0, 7 if depth < 3 else 5)
    if kind == 0:
        return None
    if kind == 1:
        return rnd.random() < 0.5
    if kind == 2:
        return rnd.choice(NUMBERS)
    if kind == 3:
        return rnd.randint(-(10**6), 10**6)
    if kind in (4, 5):
        return random_text(rnd)
    if kind == 6:
        return [random_value(rnd, depth + 1) for _ in range(rnd.randint(0, 3))]
    return {random_text(rnd): random_value(rnd, depth + 1) for _ in range(rnd.randint(0, 3))}


def _paths(value, prefix=()):
    """Every path into a JSON value: where a mutation may land."""
    yield prefix
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _paths(child, prefix + (key,))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _paths(child, prefix + (index,))


def _get(value, path):
    for key in path:
        value = value[key]
    return value


def _set(value, path, new):
    if not path:
        return new
    _get(value, path[:-1])[path[-1]] = new
    return value


def mutate_value(rnd, value):
    """One to three JSON-level mutations of a valid value."""
    for _ in range(rnd.randint(1, 3)):
        paths = list(_paths(value))
        path = rnd.choice(paths)
        how = rnd.choice(["replace", "delete", "add key", "future version", "deep", "huge", "wrap"])
        if how == "replace":
            value = _set(value, path, random_value(rnd))
        elif how == "delete" and path:
            del _get(value, path[:-1])[path[-1]]
        elif how == "add key":
            dicts = [p for p in paths if isinstance(_get(value, p), dict)]
            if dicts:
                _get(value, rnd.choice(dicts))[random_text(rnd)] = random_value(rnd)
        elif how == "future version" and isinstance(value, dict):
            value["schema_version"] = rnd.choice([4, 99, 10**20, "3", 3.0, -1, None, True])
        elif how == "deep":
            value = _set(value, path, DEEP)
        elif how == "huge":
            value = _set(value, path, f"__geomprobe_huge_{rnd.choice(sorted(HUGE_TEXT))}__")
        elif how == "wrap":
            value = _set(value, path, [_get(value, path)])
    return value


def serialize(rnd, value, jsonl: bool) -> bytes:
    if jsonl and isinstance(value, list):
        text = "".join(json.dumps(row) + "\n" for row in value)
    else:
        text = json.dumps(value, indent=1 if rnd.random() < 0.2 else None)
    depth = rnd.choice([65, 65, 200, 1000, 1000, 100_000])
    text = text.replace(json.dumps(DEEP), "[" * depth + "]" * depth)
    for name, token in HUGE_TEXT.items():
        text = text.replace(json.dumps(f"__geomprobe_huge_{name}__"), token)
    return text.encode("utf-8")


def mutate_bytes(rnd, raw: bytes) -> bytes:
    how = rnd.choice(["keep", "keep", "truncate", "flip", "insert", "invalid utf-8", "bom", "nul"])
    if how == "truncate" and raw:
        return raw[: rnd.randint(0, len(raw) - 1)]
    if how == "flip" and raw:
        raw = bytearray(raw)
        for _ in range(rnd.randint(1, 4)):
            raw[rnd.randint(0, len(raw) - 1)] = rnd.randint(0, 255)
        return bytes(raw)
    if how == "insert":
        at = rnd.randint(0, len(raw))
        return raw[:at] + rnd.randbytes(rnd.randint(1, 8)) + raw[at:]
    if how == "invalid utf-8":
        at = rnd.randint(0, len(raw))
        return raw[:at] + rnd.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80"]) + raw[at:]
    if how == "bom":
        return b"\xef\xbb\xbf" + raw
    if how == "nul":
        return raw.replace(b" ", b"\x00", 1)
    return raw


@functools.cache
def _valid(name: str) -> bytes:
    return READERS[name][2]()


def example_bytes(rnd, name: str) -> bytes:
    """What one example writes into the reader's file: random bytes (one in ten), or its valid file
    mutated as JSON (or YAML, TOML) and then as bytes."""
    _, file, valid, _ = READERS[name]
    if rnd.random() < 0.1:
        return rnd.randbytes(rnd.randint(0, 512))
    raw = _valid(name)
    if rnd.random() < 0.6:
        if file.endswith(".jsonl"):
            raw = serialize(rnd, mutate_value(rnd, [json.loads(line) for line in raw.splitlines()]), True)
        elif file.endswith(".json"):
            raw = serialize(rnd, mutate_value(rnd, json.loads(raw)), False)
        elif file.endswith((".yaml", ".toml")):
            value = mutate_value(rnd, json.loads(_json(CONFIG if "config" in file else SWEEP_FILE)))
            try:
                raw = (_yaml if file.endswith(".yaml") else _toml)(value)
            except Exception:  # noqa: BLE001 - a value YAML or TOML cannot write: random bytes instead
                raw = rnd.randbytes(64)
    return mutate_bytes(rnd, raw)


# ------------------------------------------------------------------------------------------------
# the check


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang(f"a reader ran over {HANG_S} s")


def _snapshot(root: Path) -> dict:
    return {str(path): (path.lstat().st_mode, path.lstat().st_size, path.lstat().st_mtime_ns)
            for path in [root, *root.rglob("*")]}


_folders: dict[tuple[str, str], tuple] = {}


def _example_folder(tmp_path: Path, name: str) -> tuple:
    """(the reader's folder, prepared once per test and reused by its examples, whose file each
    example rewrites; what the folder holds besides that file; the sentinel folder beside it,
    files a reader must never touch, also reachable from the example's folder through a link, and
    its snapshot; the names in tmp_path)."""
    key = (str(tmp_path), name)
    if key not in _folders:
        outside, folder = tmp_path / "outside", tmp_path / "example"
        outside.mkdir()
        (outside / "keep.json").write_text('{"keep": true}')
        (outside / "manifest.json").write_text("{}")
        folder.mkdir()
        (folder / "linked").symlink_to(outside, target_is_directory=True)
        prepare = READERS[name][3]
        if prepare is not None:
            prepare(folder)
        target = folder / READERS[name][1]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(b"")
        held = {path: data for path, data in _contents(folder).items() if path != str(target)}
        _folders[key] = folder, target, held, outside, _snapshot(outside), sorted(os.listdir(tmp_path))
    return _folders[key]


def check_one(tmp_path: Path, name: str, raw: bytes) -> None:
    """Write `raw` as the reader's file and read it: a value or a one-line GeomprobeError, within
    the time limit; afterwards the folder holds what it held, and nothing outside it changed."""
    read, file, _, _ = READERS[name]
    folder, target, held, outside, outside_before, around = _example_folder(tmp_path, name)
    target.write_bytes(raw)
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(HANG_S)
    try:
        read(folder, file)
    except GeomprobeError as error:
        text = str(error)
        assert text and "\n" not in text and "\r" not in text, f"{name}: not one line: {text!r}"
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert _snapshot(outside) == outside_before and sorted(os.listdir(tmp_path)) == around, \
        f"{name}: a file outside the example was touched"
    assert _contents(folder) == {**held, str(target): raw}, f"{name}: a reader changed the files it read"


def _contents(folder: Path) -> dict:
    return {str(p): p.read_bytes() for p in folder.rglob("*") if p.is_file() and not p.is_symlink()}


def _settings(examples: int):
    return settings(max_examples=examples, deadline=DEADLINE, database=None, derandomize=examples <= FAST,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                           HealthCheck.data_too_large, HealthCheck.filter_too_much])


RANDOMS = st.randoms(use_true_random=False)
# the default run: one target per kind of file (the slow tier adds the callers above the readers:
# the run directory's, the report's, the other formats of the sweep file, ...)
FAST_READERS = ["manifest", "results", "run (results)", "run document", "extraction meta", "load_extraction (meta)",
                "extraction request", "config (JSON)", "config (YAML)", "prompts (JSONL)", "sweep.json",
                "sweep file (TOML)", "job result", "wind-tunnel metrics", "windtunnel.json",
                "checkpoints index (metrics)", "model config.json", "rows (JSONL)"]


@pytest.mark.parametrize("name", FAST_READERS)
@_settings(FAST)
@given(rnd=RANDOMS)
def test_fuzz_reader(tmp_path, name, rnd):
    check_one(tmp_path, name, example_bytes(rnd, name))


@pytest.mark.slow
@pytest.mark.fuzz
@pytest.mark.parametrize("name", list(READERS))
@_settings(SLOW)
@given(rnd=RANDOMS)
def test_fuzz_reader_slow(tmp_path, name, rnd):
    check_one(tmp_path, name, example_bytes(rnd, name))


# ------------------------------------------------------------------------------------------------
# what is not a regular file, and links


@pytest.mark.parametrize("name", list(READERS))
@pytest.mark.parametrize("what", ["/dev/zero", "fifo", "directory", "link to /dev/zero", "dangling link",
                                  "link to a FIFO", "empty"])
def test_devices_fifos_directories_and_links(tmp_path, name, what):
    read, file, valid, prepare = READERS[name]
    folder = tmp_path / "example"
    folder.mkdir()
    if prepare is not None:
        prepare(folder)
    target = folder / file
    target.parent.mkdir(parents=True, exist_ok=True)
    target.unlink(missing_ok=True)
    if what == "fifo":
        os.mkfifo(target)
    elif what == "directory":
        target.mkdir()
    elif what == "dangling link":
        target.symlink_to(tmp_path / "nowhere")
    elif what == "link to a FIFO":
        os.mkfifo(tmp_path / "a-fifo")
        target.symlink_to(tmp_path / "a-fifo")
    elif what == "empty":
        target.write_bytes(b"")
    else:
        target.symlink_to("/dev/zero")
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(HANG_S)
    try:
        read(folder, file)
    except GeomprobeError as error:
        assert str(error) and "\n" not in str(error)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
