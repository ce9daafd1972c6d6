"""The schemas of the files geomprobe reads back, as pydantic v2 models (geomprobe.readers checks
every file against its own after geomprobe.files has read and parsed it within bounds).

Lenient where the project promises forward compatibility: keys a model does not name are kept
and ignored (extra="allow"; a newer geomprobe may add them), a newer schema_version is a note, not
an error. Strict where a wrong type would crash later: the models run in pydantic's strict mode
(no "5" for 5, no true for 1), and every key the code indexes is typed, containers included. The
readers return the JSON value as parsed (dicts and lists, as the rest of the package uses them);
the models are the checks and the documentation of what each file holds.

Foundation layer: pydantic only (imported by geomprobe.readers when a file is first checked, so the
command line's start-up does not pay for it).
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Annotated, Any, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt, StrictStr, StringConstraints, field_validator

Number = Union[StrictInt, StrictFloat]
ArrayName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")]  # <name>.npy beside it


class Lenient(BaseModel):
    """Strict types for the keys named, unknown keys kept (a newer geomprobe's additions)."""

    model_config = ConfigDict(strict=True, extra="allow")


# ----------------------------------------------------------------------------------------------
# a run directory: manifest.json, run.json, <suite>/results.json


class SuiteEntry(Lenient):
    """manifest.json "suites"[name]: what one suite did in the run."""

    status: Optional[str] = None  # running | complete | failed | interrupted | skipped
    started: Optional[str] = None
    ended: Optional[str] = None
    options: Optional[dict[str, Any]] = None  # the suite config's to_dict()
    run_config: Optional[dict[str, Any]] = None
    prompts: Optional[dict[str, Any]] = None  # {source, n, sha256}
    readouts: Optional[list[str]] = None
    why: Optional[str] = None  # why it was skipped
    error: Optional[str] = None  # why it failed
    # sha256 of the results.json the finished suite wrote (geomprobe.integrity); None before geomprobe
    # recorded it. Any string: one that is not the file's makes the file read as changed.
    results_sha256: Optional[StrictStr] = None


class ModelRecord(Lenient):
    """manifest.json "model": LoadedModel.describe()."""

    spec: Optional[str] = None
    source: Optional[str] = None
    revision: Optional[str] = None
    commit: Optional[str] = None
    family: Optional[str] = None
    shape: Optional[dict[str, Any]] = None


class Manifest(Lenient):
    """<run>/manifest.json (geomprobe.rundir.RunDirectory): what produced the directory."""

    fingerprint: Optional[str] = None
    config: Optional[dict[str, Any]] = None
    status: Optional[str] = None
    created: Optional[str] = None
    started: Optional[str] = None
    ended: Optional[str] = None
    command: Optional[str] = None
    versions: Optional[dict[str, Optional[str]]] = None
    geomprobe_commit: Optional[str] = None
    model: Optional[ModelRecord] = None
    backend: Optional[str] = None
    dtype: Optional[str] = None
    seed: Optional[StrictInt] = None
    suites: dict[str, SuiteEntry] = Field(default_factory=dict)


class ResultsHeader(Lenient):
    """The header of every <run>/<suite>/results.json (geomprobe.suites.schema.Header); the body is
    the suite's TypedDict, checked by geomprobe.suites.schema. Files written before the header
    (schema 1) have none of these keys."""

    schema_version: StrictInt = Field(1, ge=1)
    suite: Optional[str] = None
    model: Optional[str] = None
    geomprobe_version: Optional[str] = None


class RunDocumentSuite(Lenient):
    status: Optional[str] = None
    options: Optional[dict[str, Any]] = None
    prompts: Optional[dict[str, Any]] = None
    started: Optional[str] = None
    ended: Optional[str] = None
    seconds: Optional[Number] = None
    headlines: Optional[list[dict[str, Any]]] = None
    results: Optional[dict[str, Any]] = None


class RunDocument(Lenient):
    """<run>/run.json (geomprobe.results.Run.document): the whole run as one document."""

    document: Literal["geomprobe run"]
    schema_version: StrictInt = Field(ge=1)
    run_dir: Optional[str] = None
    status: Optional[str] = None
    config: Optional[dict[str, Any]] = None
    fingerprint: Optional[str] = None
    versions: Optional[dict[str, Optional[str]]] = None
    model: Optional[ModelRecord] = None
    verdict: Optional[dict[str, Any]] = None
    evidence: Optional[dict[str, Any]] = None
    suites: dict[str, RunDocumentSuite] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)


# ----------------------------------------------------------------------------------------------
# an extraction directory: meta.json (marks it finished) and request.json (what is being computed)


ArrayFileName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,63}\.npy$")]


class ArrayFile(Lenient):
    """meta.json "array_files"[<name>.npy]: the file as extraction wrote it."""

    sha256: StrictStr
    bytes: StrictInt = Field(ge=0)


class ExtractionMeta(Lenient):
    """<extraction>/meta.json (geomprobe.extraction.storage._meta): written last, it marks a finished
    extraction; load_extraction indexes layers, token_ids and shapes."""

    model: Optional[str] = None
    n_prompts: StrictInt = Field(ge=0)
    layers: list[StrictInt]
    readouts: list[str]
    tokens: list[Union[str, StrictInt]] = Field(default_factory=list)
    token_ids: list[StrictInt]
    backend: Optional[str] = None
    shape: Optional[dict[str, Any]] = None
    family: Optional[str] = None
    prompts_sha256: str
    max_tokens: Optional[StrictInt] = None
    shapes: Optional[dict[ArrayName, list[Annotated[StrictInt, Field(ge=0)]]]] = None
    model_identity: Optional[dict[str, Any]] = None
    # <name>.npy -> its sha256 and size as written (geomprobe.integrity); None before geomprobe recorded them
    array_files: Optional[dict[ArrayFileName, ArrayFile]] = None


class ExtractionRequest(Lenient):
    """<extraction>/request.json (geomprobe.extraction.storage._ShardSink): the prompts, layers, model
    and settings the shards beside it were computed for."""

    prompts_sha256: str
    layers: Optional[list[StrictInt]] = None
    model_identity: Optional[dict[str, Any]] = None
    readouts: Optional[list[str]] = None
    tokens: Optional[list[Union[str, StrictInt]]] = None
    backend: Optional[str] = None
    max_tokens: Optional[StrictInt] = None


# ----------------------------------------------------------------------------------------------
# what the user writes: config files and prompt files


class ConfigFile(Lenient):
    """A `--config` file (geomprobe.config.read_config_file): option names (field names, or flags
    without dashes) to values, checked later by the options' own dataclasses; "suite" (or "suites")
    as text or a list of names."""

    suite: Union[str, list[str], None] = None
    suites: Union[str, list[str], None] = None


class PromptRecord(BaseModel):
    """One line of a JSON-lines prompt file (geomprobe.prompts.read_prompts). Unknown keys are
    ignored; an id may be a whole number (written as text); domain and source are text as given."""

    model_config = ConfigDict(extra="allow")

    id: Union[StrictStr, StrictInt]
    text: StrictStr
    domain: Any = ""
    source: Any = ""

    @field_validator("text")
    @classmethod
    def _not_blank(cls, text: str) -> str:
        if not text.strip():
            raise ValueError("must be a non-empty string")
        return text


# ----------------------------------------------------------------------------------------------
# a sweep directory: sweep.json and each job's result


def _inside(run_dir: str) -> str:
    path = PurePosixPath(run_dir)
    if not run_dir or path.is_absolute() or ".." in path.parts or "\\" in run_dir:
        raise ValueError(f"{run_dir!r} lies outside the sweep directory (a relative path below it is expected)")
    return run_dir


class SweepJob(Lenient):
    """One job of sweep.json (geomprobe.sweep.spec.build_sweep, then the driver's record): the keys
    --status indexes are required (revision may be null)."""

    name: str
    model: str
    revision: Optional[str]
    suites: list[str]
    run_dir: str  # relative to the sweep directory: runs/<job>
    expect: dict[str, Any]
    status: Optional[str] = None
    error: Optional[str] = None
    job_id: Union[str, StrictInt, None] = None
    token: Optional[str] = None
    executor: Optional[str] = None
    attempts: Optional[StrictInt] = None
    started: Optional[str] = None
    ended: Optional[str] = None
    seconds: Optional[Number] = None
    host: Optional[str] = None

    _run_dir_inside = field_validator("run_dir")(classmethod(lambda cls, value: _inside(value)))


class SweepSpec(Lenient):
    models: list[str] = Field(default_factory=list)
    revisions: Optional[str] = None
    suites: str
    options: dict[str, Any]
    skip_unsupported: bool
    suite_options: dict[str, Optional[dict[str, Any]]]


class SweepRecord(Lenient):
    """<sweep>/sweep.json (geomprobe.sweep.record.Record)."""

    format: StrictInt = 1
    created: Optional[str] = None
    updated: Optional[str] = None
    command: Optional[str] = None
    spec: SweepSpec
    jobs: list[SweepJob]
    history: list[Any] = Field(default_factory=list)


class SweepFile(Lenient):
    """A `geomprobe sweep --file` settings file (TOML, YAML or JSON; geomprobe.sweep.spec.read_sweep_file
    names the keys it accepts): the shapes of the values it reads."""

    models: Union[str, list[str], None] = None
    revisions: Union[str, list[Union[str, StrictInt]], None] = None
    suites: Union[str, list[str], None] = None
    suite: Union[str, list[str], None] = None
    out: Optional[str] = None
    options: Optional[dict[str, Any]] = None


class JobResult(Lenient):
    """<sweep>/logs/result-<token>.json (geomprobe.sweep.job.run_job): what a job left."""

    status: Literal["complete", "failed"]
    error: Optional[str] = None
    seconds: Optional[Number] = None
    host: Optional[str] = None
    pid: Optional[StrictInt] = None
    gpus: Optional[str] = None


# ----------------------------------------------------------------------------------------------
# a wind-tunnel training directory: metrics.json, windtunnel.json and checkpoints/step-N.pt


class TrainConfigRecord(Lenient):
    """metrics.json "config": geomprobe.windtunnel.train.TrainConfig as a dict."""

    task: str
    task_options: dict[str, Any] = Field(default_factory=dict)
    arch: str
    spec: dict[str, Any] = Field(default_factory=dict)
    seed: StrictInt = 0
    steps: Optional[StrictInt] = None
    eval_lengths: Optional[list[Optional[StrictInt]]] = None


class WindTunnelMetrics(Lenient):
    """<training>/metrics.json (geomprobe.windtunnel.train): the run's configuration, final step and
    held-out scores (losses may be NaN where training diverged)."""

    task: Optional[str] = None
    arch: Optional[str] = None
    steps: Optional[StrictInt] = Field(None, ge=0)
    config: Optional[TrainConfigRecord] = None
    eval: Optional[dict[str, Any]] = None
    history: Optional[list[dict[str, Any]]] = None


class WindTunnelInfo(Lenient):
    """<training>/windtunnel.json: what makes a model directory a wind tunnel (and its checkpoints
    revisions)."""

    task: str
    task_options: dict[str, Any] = Field(default_factory=dict)
    arch: Optional[str] = None
    vocab_size: Optional[StrictInt] = None
    answer_ids: Optional[list[StrictInt]] = None
