"""One reader per kind of file geomprobe reads back: each bounded and parsed by geomprobe.files,
then checked against its schema (geomprobe.schemas, pydantic v2), every failure one line naming
the file and the fix (a geomprobe.files.FileProblem that is also the kind's geomprobe.errors class).

| reader | file | size cap | depth cap | NaN/Infinity | raises |
|---|---|---|---|---|---|
| read_manifest | <run>/manifest.json | 16 MiB | 64 | accepted | RunDirectoryError |
| read_results | <run>/<suite>/results.json | 512 MiB | 64 | accepted | RunDirectoryError |
| read_run_document | <run>/run.json | 512 MiB | 64 | accepted | RunDirectoryError |
| read_extraction_meta | <extraction>/meta.json | 16 MiB | 16 | refused | RunDirectoryError |
| read_extraction_request | <extraction>/request.json | 16 MiB | 16 | refused | RunDirectoryError |
| read_config | --config FILE (JSON, YAML) | 1 MiB | 32 | refused | ConfigError |
| PROMPTS (geomprobe.prompts.read_prompts) | --prompts FILE (JSONL, text) | 1 GiB | 8 a line | refused | PromptFileError |
| read_sweep_record | <sweep>/sweep.json | 64 MiB | 64 | refused | RunDirectoryError |
| read_sweep_file | --file FILE (TOML, YAML, JSON) | 1 MiB | 32 | refused | ConfigError |
| read_job_result | <sweep>/logs/result-<token>.json | 1 MiB | 16 | refused | RunDirectoryError |
| read_metrics | <training>/metrics.json | 64 MiB | 64 | accepted | RunDirectoryError |
| read_windtunnel_info | <training>/windtunnel.json | 1 MiB | 16 | refused | ModelNotFoundError |
| read_model_config | <model>/config.json | 16 MiB | 64 | refused | ModelNotFoundError (ConfigError) |
| read_checkpoint_index | <training>/checkpoints/step-N.pt, listed | - | - | - | RunDirectoryError |
| read_data | geomprobe's other JSON (caches, rows, curves) | 256 MiB | 64 | accepted | RunDirectoryError |
| files.regular_file(path, TORCH_FILE) | a checkpoint, model.pt, state.pt before torch.load | 64 GiB | - | - | RunDirectoryError |
| files.regular_file(path, ARRAY) | an extraction's <array>.npy or shard before np.load | - | - | - | RunDirectoryError |

NaN and Infinity are accepted where geomprobe itself may write them (a statistic of a degenerate
sample, a diverged training loss) and refused where no valid file holds them. A newer
schema_version is not an error here: the callers note it (geomprobe.suites.reading).
"""

from __future__ import annotations

import re
from pathlib import Path

from geomprobe.errors import ConfigError, ModelNotFoundError, PromptFileError, RunDirectoryError
from geomprobe.files import (
    FileKind,
    GiB,
    MiB,
    MissingFile,
    NotRegularFile,
    SchemaMismatch,
    decode,
    load_toml,
    load_yaml,
    loads,
    read_bytes,
    read_json,
)

OVERWRITE = "rerun `geomprobe run` with --overwrite to start this run afresh, or use another --out"

MANIFEST = FileKind("run manifest", RunDirectoryError, 16 * MiB, OVERWRITE, nonfinite=True, damaged="corrupt")
RESULTS = FileKind("suite's results.json", RunDirectoryError, 512 * MiB, "rerun the suite with the same --model and --out "
                   "to write it again", nonfinite=True, damaged="damaged")
RUN_DOCUMENT = FileKind("run document (run.json)", RunDirectoryError, 512 * MiB, "rerun `geomprobe run` on the "
                        "directory (or geomprobe.results.write_run_document) to write it again", nonfinite=True,
                        damaged="damaged")
EXTRACTION_META = FileKind("extraction's meta.json", RunDirectoryError, 16 * MiB, "the extraction is damaged; rerun "
                           "the same command to compute it again", max_depth=16, damaged="damaged")
EXTRACTION_REQUEST = FileKind("extraction's request.json", RunDirectoryError, 16 * MiB, "rerun the same command: "
                              "the extraction starts afresh", max_depth=16, damaged="damaged")
CONFIG = FileKind("config file", ConfigError, 1 * MiB, "write a JSON or YAML mapping of option names to values "
                  "(geomprobe.config.write_config_file writes one)", max_depth=32, bom=True)
PROMPTS = FileKind("prompt file", PromptFileError, 1 * GiB, "give a prompt file (.jsonl records or plain text)",
                   max_depth=8, bom=True)
SWEEP_RECORD = FileKind("sweep record", RunDirectoryError, 64 * MiB, "rerun the sweep to rewrite it",
                        damaged="damaged")
SWEEP_FILE = FileKind("sweep file", ConfigError, 1 * MiB, "write a TOML, YAML or JSON table of settings (models = "
                      "[...], suites = ..., out = ...)", max_depth=32, bom=True)
JOB_RESULT = FileKind("sweep job's result", RunDirectoryError, 1 * MiB, "rerun the sweep to run the job again",
                      max_depth=16, damaged="damaged")
METRICS = FileKind("wind-tunnel metrics.json", RunDirectoryError, 64 * MiB, "train it again (geomprobe windtunnel "
                   "train --out DIR --overwrite)", nonfinite=True, damaged="damaged")
WINDTUNNEL_INFO = FileKind("wind-tunnel description (windtunnel.json)", ModelNotFoundError, 1 * MiB, "train it again "
                           "(geomprobe windtunnel train --out DIR --overwrite)", max_depth=16, damaged="damaged")
MODEL_CONFIG = FileKind("model configuration (config.json)", ModelNotFoundError, 16 * MiB, "fix or replace it "
                        "(save_pretrained writes a valid one)", damaged="not readable as a model configuration")
MODEL_FILE = FileKind("model file", ModelNotFoundError, 1 << 50, "replace it with the model's own file "
                      "(save_pretrained writes one)")  # only its kind is checked: transformers reads it
TORCH_FILE = FileKind("torch file (weights or training state)", RunDirectoryError, 64 * GiB, "remove it, or train "
                      "again (geomprobe windtunnel train --out DIR --overwrite)")
ARRAY = FileKind("extraction array", RunDirectoryError, 1 << 50, "the extraction is damaged; rerun with --overwrite")
DATA = FileKind("geomprobe data file", RunDirectoryError, 256 * MiB, "delete it: geomprobe writes it again",
                nonfinite=True, damaged="damaged")
YAML_SUFFIXES = (".yaml", ".yml")


def _where(loc) -> str:
    return "".join(f"[{part}]" if isinstance(part, int) else (f".{part}" if i else str(part))
                   for i, part in enumerate(loc)) or "the top level"


def _input_words(value) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 40 else text[:37] + '...'}"


def schema_problem(error, path, kind: FileKind, fix: str | None = None, line: int | None = None, prefix=()):
    """A pydantic ValidationError as the kind's SchemaMismatch: one line, the first problem with the
    keys that lead to it and what was found there."""
    first = error.errors(include_url=False)[0]
    loc = (*prefix, *first.get("loc", ()))
    message = first.get("msg", "invalid").removeprefix("Value error, ")
    # a missing key has nothing to show; a check of ours (value_error) names the value itself
    found = "" if first.get("type") in ("missing", "value_error") else f" (found {_input_words(first.get('input'))})"
    return kind.fail(SchemaMismatch, path, f"is not a {kind.name}: {_where(loc)}: {message[:1].lower()}{message[1:]}"
                     f"{found}", fix, line)


def validate(model, data, path, kind: FileKind, fix: str | None = None, line: int | None = None):
    """`data` when it matches the pydantic `model`, else schema_problem's error."""
    from pydantic import ValidationError

    try:
        model.model_validate(data)
    except ValidationError as error:
        raise schema_problem(error, path, kind, fix, line) from None
    return data


def _json_type(value) -> str:
    return {list: "array", str: "string", bool: "boolean", int: "number", float: "number",
            type(None): "null"}.get(type(value), type(value).__name__)


def _mapping(data, path, kind: FileKind, fix: str | None):
    if not isinstance(data, dict):
        raise kind.fail(SchemaMismatch, path, f"holds a JSON {_json_type(data)}, not the object a {kind.name} is", fix)
    return data


def _read(path, kind: FileKind, model_name: str, fix: str | None = None) -> dict:
    from geomprobe import schemas

    data = _mapping(read_json(path, kind, fix), path, kind, fix)
    return validate(getattr(schemas, model_name), data, path, kind, fix)


# ----------------------------------------------------------------------------------------------
# a run directory


def read_manifest(path, fix: str | None = None) -> dict:
    """<run>/manifest.json (pass the file's path) as a dict, checked against schemas.Manifest."""
    return _read(path, MANIFEST, "Manifest", fix)


def read_results(path, fix: str | None = None) -> dict:
    """<run>/<suite>/results.json as a dict, its header checked (schemas.ResultsHeader); the suite's
    body is checked by geomprobe.suites.schema where the suite declared a type."""
    return _read(path, RESULTS, "ResultsHeader", fix)


def read_run_document(path, fix: str | None = None) -> dict:
    """<run>/run.json as a dict, checked against schemas.RunDocument."""
    return _read(path, RUN_DOCUMENT, "RunDocument", fix)


def read_extraction_meta(path, fix: str | None = None) -> dict:
    """<extraction>/meta.json, checked against schemas.ExtractionMeta."""
    return _read(path, EXTRACTION_META, "ExtractionMeta", fix)


def read_extraction_request(path, fix: str | None = None) -> dict:
    """<extraction>/request.json, checked against schemas.ExtractionRequest."""
    return _read(path, EXTRACTION_REQUEST, "ExtractionRequest", fix)


# ----------------------------------------------------------------------------------------------
# what the user writes


def read_config(path, what: str = "--config") -> dict:
    """A --config file: JSON, or YAML for .yaml/.yml (PyYAML's safe loader, no aliases), as a
    mapping (an empty file is {}), checked against schemas.ConfigFile."""
    import os

    from geomprobe import schemas
    from geomprobe.files import problem

    path = Path(path)
    shown = f"{what} {path}" if what else str(path)
    if not os.path.lexists(path):
        raise problem(MissingFile, ConfigError, f"{shown}: cannot read it (no such file): "
                      f"{_config_fix(path) if _config_fix(path) != CONFIG.fix else 'check the path'}")
    text = decode(read_bytes(path, CONFIG, _config_fix(path), shown), shown, CONFIG)
    if path.suffix.lower() in YAML_SUFFIXES:
        try:
            data = load_yaml(text, shown, CONFIG)
        except ImportError:
            raise ConfigError("YAML config files need PyYAML: pip install pyyaml (or write the file as JSON)") from None
    else:
        data = loads(text, shown, CONFIG, syntax_fix="YAML files end in .yaml or .yml")
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise CONFIG.fail(SchemaMismatch, shown, f"holds a {type(data).__name__}, not a mapping of option names to "
                          "values", "")
    return validate(schemas.ConfigFile, data, shown, CONFIG)


def _config_fix(path: Path) -> str:
    text = str(path).strip()
    if text.startswith("{") and text.endswith("}"):
        return ("--config takes a file, not JSON text: write the options into a .json file and pass its path "
                "(or give them as flags)")
    return CONFIG.fix


def read_sweep_file(path) -> dict:
    """A `geomprobe sweep --file`: TOML (by default), YAML (.yaml, .yml; PyYAML) or JSON (.json), as
    a table of settings checked against schemas.SweepFile."""
    from geomprobe import schemas

    path = Path(path)
    shown = f"--file {path}"
    text = decode(read_bytes(path, SWEEP_FILE, label=shown), shown, SWEEP_FILE)
    suffix = path.suffix.lower()
    try:
        if suffix in YAML_SUFFIXES:
            data = load_yaml(text, shown, SWEEP_FILE)
        elif suffix == ".json":
            data = loads(text, shown, SWEEP_FILE)
        else:
            data = load_toml(text, shown, SWEEP_FILE)
    except ImportError:
        need = "pyyaml (pip install pyyaml); or write it as TOML" if suffix in YAML_SUFFIXES else \
            "tomli on Python 3.10 (pip install tomli)"
        raise ConfigError(f"--file {path}: reading it needs {need}") from None
    if not isinstance(data, dict):
        raise SWEEP_FILE.fail(SchemaMismatch, shown, "holds no table of settings", "expected models = [...], "
                              "suites = ..., out = ...")
    return validate(schemas.SweepFile, {str(key).replace("-", "_"): value for key, value in data.items()}, shown,
                    SWEEP_FILE)


# ----------------------------------------------------------------------------------------------
# a sweep directory


def read_sweep_record(path) -> dict:
    """<sweep>/sweep.json, checked against schemas.SweepRecord (every job a record whose run_dir lies
    below the sweep directory)."""
    return _read(path, SWEEP_RECORD, "SweepRecord")


def read_job_result(path) -> dict:
    """<sweep>/logs/result-<token>.json, checked against schemas.JobResult."""
    return _read(path, JOB_RESULT, "JobResult")


# ----------------------------------------------------------------------------------------------
# a wind-tunnel training directory


def read_metrics(path, fix: str | None = None) -> dict:
    """<training>/metrics.json, checked against schemas.WindTunnelMetrics."""
    return _read(path, METRICS, "WindTunnelMetrics", fix)


def read_windtunnel_info(path) -> dict:
    """<training>/windtunnel.json, checked against schemas.WindTunnelInfo."""
    return _read(path, WINDTUNNEL_INFO, "WindTunnelInfo")


CHECKPOINT_NAME = re.compile(r"step-?0*(\d+)")


def read_checkpoint_index(directory, final_step: int | None = None) -> dict[int, Path]:
    """step -> checkpoint file of a wind-tunnel training directory (checkpoints/step-N.pt), in step
    order, without any past final_step (a directory an older geomprobe trained into twice holds a
    longer run's). Names that are not step-N.pt are left out; a step-N.pt that is not a regular
    file (a FIFO, a device, a directory, a link to one) is refused in one line."""
    import os
    import stat

    folder = Path(directory) / "checkpoints"
    found: dict[int, Path] = {}
    if not folder.is_dir():
        return found
    for file in folder.glob("step-*.pt"):
        match = CHECKPOINT_NAME.fullmatch(file.stem)
        if match is None or len(match.group(1)) > 12:
            continue
        step = int(match.group(1))
        if final_step is not None and step > final_step:
            continue
        try:
            mode = os.stat(file).st_mode
        except OSError:
            continue  # a dangling link: no checkpoint
        if not stat.S_ISREG(mode):
            raise METRICS.fail(NotRegularFile, file, "is not a regular file (a checkpoint is a file torch saved)",
                               "remove it, or train again (geomprobe windtunnel train --out DIR --overwrite)")
        found[step] = file
    return dict(sorted(found.items()))


def read_model_config(path, error=None) -> dict:
    """A model directory's config.json as a mapping (what transformers reads again, after this
    bounded read has refused a FIFO, a device or a file over 16 MiB); error: the geomprobe.errors
    class to raise (ModelNotFoundError by default, ConfigError for the planner)."""
    import dataclasses

    kind = MODEL_CONFIG if error is None else dataclasses.replace(MODEL_CONFIG, error=error)
    return _mapping(read_json(path, kind), path, kind, None)


# ----------------------------------------------------------------------------------------------
# anything else geomprobe wrote and reads back


def read_data(path, fix: str | None = None, kind: FileKind = DATA):
    """The JSON value of a file geomprobe wrote for itself (a cache entry, a suite's side file), bounded."""
    return read_json(path, kind, fix)


def read_rows(path, fix: str | None = None, kind: FileKind = DATA) -> list:
    """The values of a JSON-lines file geomprobe wrote (a suite's per-prompt rows), bounded; a bad
    line names its number."""
    text = decode(read_bytes(path, kind, fix), path, kind, fix)
    rows = []
    for number, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            rows.append(loads(line, path, kind, fix, line=number))
    return rows

