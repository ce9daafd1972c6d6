"""`geomprobe sweep`: the same suites over several models and revisions, one run directory each.

    geomprobe sweep --models pythia-160m,pythia-410m --revisions log:10 --suites geometry,sula \\
        --out sweeps/pythia --dtype bfloat16            # any `geomprobe run` option passes through
    geomprobe sweep --models tiny-neox,runs/wt@all --suites geometry --out sweeps/wt   # MODEL@REVISIONS: its own
    geomprobe sweep --file sweep.toml                   # the same as a file (TOML; YAML with pyyaml)
    geomprobe sweep --status sweeps/pythia              # done / running / failed / pending per job
    geomprobe sweep --status sweeps/pythia --json       # the same as JSON

A job is one (model, revision): `geomprobe.runner.run` on one loaded model for all the suites,
into `<out>/runs/<name>@<revision or main>/`: an alias's or hub id's slug, or a local directory's
last path component (with parent components where two would collide; run_names). The sweep's own
record is `<out>/sweep.json` (the spec, and per job its model, revision, suites, run directory,
status, error, times and executor job id), written atomically by the driver, which holds the sweep
directory's lock (geomprobe.locks) while it runs: one driver per sweep directory. Jobs write only
into their own run directories, which are the truth `--status` reads: a job is done when its run
manifest is complete for every requested suite with the same options and the same model settings,
running while its run directory's lock is held.

Rerunning a sweep skips the jobs that are done and resumes the others (a job killed mid-way
resumes through the runner's own resume). A job that fails is recorded with its one-line error
and the others go on; the sweep then exits 1. Everything (options, models, revisions, executor
settings, existing run directories of another configuration) is checked before any job starts or
is submitted, and every model problem is reported, one line each: an alias must be known, a local
directory must hold a model (config.json and weights) and the revisions it is asked for, and each
revision of a hub model must be in the local Hugging Face cache (config.json with weights) or, while
the hub is reachable, fetchable (its config.json is fetched; weights never are). Nothing loads.

Executors (submitit): `local` (default) runs every job in its own subprocess, one at a time on a
CPU, or with N visible GPUs up to N at once, each pinned to its GPU(s) through CUDA_VISIBLE_DEVICES;
`inline` runs them in this process, one after another (debugging); `slurm` submits one job array
(sbatch through submitit: --partition, --time, --gpus-per-job, --mem-gb, --cpus-per-job,
--array-parallelism, --slurm-account, --slurm-qos), records the job ids and returns; `--status`
then follows the jobs through their run directories. submitit's files go to `<out>/logs/`.

Revisions: a list (`step0,step1000,step143000`), `all`, or `log:N`. Pythia publishes 154
checkpoints (step0, step1, 2, 4, ..., 512, then every 1000 steps to step143000); `log:N` picks N of
them log-spaced in step + 1, always with the first and the last. On a `geomprobe windtunnel
train` output directory (or a trained wind-tunnel alias) the revisions are its checkpoints
(`step-N`, checkpoints/step-N.pt); there `all` is every saved checkpoint (and `main`, the final
model, where its last step has none). Each weight state runs once: `main` is dropped where the
checkpoint it equals is listed too (Pythia's step143000 is its main branch; a wind tunnel's
checkpoint at its last training step is its final model).
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import math
import os
import re
import shutil
import sys
import time
import traceback
from pathlib import Path
from typing import Literal, Optional

import typer

from geomprobe.commandline import SuiteAwareCommand, _parameter, option_specs, selected_suites
from geomprobe.errors import ConfigError, GeomprobeError
from geomprobe.options import option, validate

SWEEP_FILE = "sweep.json"
FORMAT = 1
LOGS = "logs"
RUNS = "runs"
POLL_S = 0.25  # how often the local driver looks at its running jobs
LOCAL_TIMEOUT_MIN = 7 * 24 * 60  # the local executor's per-job limit unless --time is given
# RunConfig fields the sweep sets per job (--models, --revisions, --out name the sweep's own)
PER_JOB = ("model", "revision", "out")
# the fields of a run manifest's config that a job's settings must match for the job to be done
RUN_IDENTITY = ("model", "revision", "dtype", "quantize", "seed", "backend", "max_tokens")
SWEEP_PANEL = "sweep"
EXECUTOR_PANEL = "executor (local: --gpus-per-job, --time; slurm: all)"

# Pythia's published checkpoints (revisions stepN): step0, 1, 2, 4, ..., 512, then every 1000 steps
PYTHIA_STEPS = (0, *(2**i for i in range(10)), *range(1000, 143001, 1000))


@dataclasses.dataclass
class ExecutorOptions:
    """How the jobs run: the executor and its resources (the slurm ones also for `local`: --time,
    --gpus-per-job)."""

    executor: Literal["local", "inline", "slurm"] = option(
        "local", "local: each job in its own subprocess (submitit), one per GPU at once or one at a time on a CPU | "
                 "inline: in this process, one after another | slurm: one job array through sbatch")
    gpus_per_job: int | None = option(None, "GPUs per job (local: default 1, or all with --device-map; slurm: "
                                            "default 1)", min=0)
    time: int | None = option(None, "minutes per job (slurm: required; local: default 7 days)", min=1)
    partition: str | None = option(None, "slurm partition")
    mem_gb: float | None = option(None, "slurm memory per job in GB", min=0, exclusive_min=True)
    cpus_per_job: int | None = option(None, "slurm CPUs per job", min=1)
    array_parallelism: int | None = option(None, "slurm: at most this many array jobs at once (submitit's "
                                                 "slurm_array_parallelism)", min=1)
    slurm_account: str | None = option(None, "slurm account (sbatch --account)")
    slurm_qos: str | None = option(None, "slurm quality of service (sbatch --qos)")

    def __post_init__(self):
        validate(self)

    def to_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


EXECUTOR_FIELDS = tuple(f.name for f in dataclasses.fields(ExecutorOptions))


@dataclasses.dataclass
class Sweep:
    """A validated sweep: its spec (what sweep.json records) and its jobs."""

    out: Path
    spec: dict
    jobs: list[dict]
    executor: ExecutorOptions


# ---------------------------------------------------------------------------------------------
# revisions


def log_spaced(steps, n: int) -> list[int]:
    """n of `steps` spaced evenly in log(step + 1), always with the first and the last, sorted and
    unique: each target takes the nearest step not taken yet (the ends first)."""
    steps = sorted(set(int(s) for s in steps))
    if n < 2:
        raise ConfigError(f"log:{n}: pick at least 2 revisions (the first and the last)")
    if n > len(steps):
        raise ConfigError(f"log:{n} asks for more revisions than the {len(steps)} there are: use all, or a smaller N")
    positions = [math.log1p(s) for s in steps]
    low, high = positions[0], positions[-1]
    targets = [low + (high - low) * i / (n - 1) for i in range(n)]
    chosen: set[int] = set()
    for target in [targets[0], targets[-1], *targets[1:-1]]:
        best = min((i for i in range(len(steps)) if i not in chosen), key=lambda i: (abs(positions[i] - target), i))
        chosen.add(best)
    return [steps[i] for i in sorted(chosen)]


def _log_spaced_of(name: str, steps, item: str) -> list[int]:
    try:
        return log_spaced(steps, int(item.split(":", 1)[1]))
    except ConfigError as error:
        raise ConfigError(f"--revisions for {name}: {error}") from None


def _is_pythia(name: str) -> bool:
    from geomprobe.models.registry import MODELS

    info = MODELS.get(name)
    hub = info.hub_id if info is not None else name
    return name.startswith("pythia-") or hub.lower().startswith("eleutherai/pythia-")


def _windtunnel_dir(name: str) -> tuple[Path | None, bool]:
    """(directory holding the checkpoints, is a wind tunnel) for a wind-tunnel alias (its cached
    directory, None while it is not trained yet) or a wind-tunnel training directory."""
    from geomprobe.models.registry import MODELS

    info = MODELS.get(name)
    if info is not None:
        if not info.hub_id.startswith("windtunnel:"):
            return None, False
        from geomprobe.windtunnel.builtin import windtunnel_dir

        directory = windtunnel_dir(info.hub_id.split(":", 1)[1])
        return (directory if (directory / "metrics.json").exists() else None), True
    path = Path(name).expanduser()
    if path.is_dir() and (path / "windtunnel.json").is_file():
        return path, True
    return None, False


def model_revisions(name: str, text: str | None) -> list[str | None]:
    """The revisions of one model a --revisions value names (None: the main / final model)."""
    from geomprobe.models.loading import windtunnel_checkpoints, windtunnel_revision
    from geomprobe.models.registry import MODELS

    if text is None or not text.strip() or text.strip() == "main":
        return [None]
    info = MODELS.get(name)
    if info is not None and info.hub_id.startswith("builtin:"):
        raise ConfigError(f"--revisions {text}: built-in model '{name}' has no revisions; sweep it without "
                          f"--revisions, or as {name}@main")
    wt_dir, is_windtunnel = _windtunnel_dir(name)
    pythia = _is_pythia(name)
    out: list[str | None] = []
    for item in [part.strip() for part in text.split(",") if part.strip()]:
        if item == "all" or re.fullmatch(r"log:\s*\d+", item):
            if is_windtunnel:
                if wt_dir is None:
                    raise ConfigError(f"--revisions {item}: {name} is not trained yet, so it has no checkpoints to "
                                      f"list: run `geomprobe run --model {name}` once first, or name the revisions")
                steps = list(windtunnel_checkpoints(wt_dir) or {})
                if not steps:
                    raise ConfigError(f"--revisions {item}: {name} has no saved checkpoints (checkpoints/step-N.pt)")
                if item == "all":
                    out += [f"step-{s}" for s in steps] + [None]
                else:
                    out += [f"step-{s}" for s in _log_spaced_of(name, steps, item)]
            elif pythia:
                if item == "all":
                    out += [f"step{s}" for s in PYTHIA_STEPS]
                else:
                    out += [f"step{s}" for s in _log_spaced_of(name, PYTHIA_STEPS, item)]
            else:
                raise ConfigError(f"--revisions {item}: no list of checkpoints is known for {name} (Pythia models "
                                  "and wind-tunnel training directories have one): name its revisions, e.g. "
                                  "--revisions main,REV")
        elif item.startswith("log"):
            raise ConfigError(f"--revisions {item}: write log:N, e.g. log:10 (N log-spaced checkpoints)")
        elif item in ("main", "final") and (is_windtunnel or item == "main"):
            out.append(None)
        elif is_windtunnel:
            if wt_dir is not None:
                found = windtunnel_revision(wt_dir, item, name)
                if found is None:
                    raise ConfigError(f"--revisions: {name} has no saved checkpoints (checkpoints/step-N.pt)")
                out.append(found[0])
            else:  # an alias not trained yet: the job trains it, then checks the step
                match = re.fullmatch(r"step-?0*(\d+)", item)
                if match is None:
                    raise ConfigError(f"--revisions {item}: a wind tunnel's revisions are its checkpoints, step-N")
                out.append(f"step-{match.group(1)}")
        elif info is None and Path(name).expanduser().is_dir():
            raise ConfigError(f"--revisions: '{name}' is a local directory, which has no revisions (only wind-tunnel "
                              "training directories do): sweep it without --revisions")
        else:
            match = re.fullmatch(r"step(\d+)", item)
            if pythia and match and int(match.group(1)) not in PYTHIA_STEPS:
                near = min(PYTHIA_STEPS, key=lambda s: abs(s - int(match.group(1))))
                raise ConfigError(f"--revisions {item}: Pythia publishes no such checkpoint (step0, step1, 2, 4, ..., "
                                  f"512, then every 1000 to step143000); nearest: step{near}")
            out.append(item)
    unique = list(dict.fromkeys(out))
    if not unique:
        raise ConfigError("--revisions is empty: give revisions, all or log:N (or leave it out for the main model)")
    final = _final_revision(name) if None in unique else None
    if final is not None and final in unique:  # main is that checkpoint's weights: one run of them, by its step
        unique.remove(None)
    return unique


def _final_revision(name: str) -> str | None:
    """The checkpoint revision whose weights are the main / final model's, when one is known:
    Pythia's step143000 (its main branch), a wind tunnel's checkpoint at its last training step."""
    if _is_pythia(name):
        return f"step{PYTHIA_STEPS[-1]}"
    wt_dir, _ = _windtunnel_dir(name)
    if wt_dir is None:
        return None
    try:
        last = json.loads((wt_dir / "metrics.json").read_text()).get("steps")
    except (OSError, ValueError, AttributeError):
        return None
    from geomprobe.models.loading import windtunnel_checkpoints

    return f"step-{last}" if isinstance(last, int) and last in (windtunnel_checkpoints(wt_dir) or {}) else None


# ---------------------------------------------------------------------------------------------
# the spec


def _aliases() -> set[str]:
    from geomprobe.models.registry import MODELS

    return set(MODELS)


def _check_model(name: str) -> None:
    """Refuse, without loading or downloading anything, a model spec that cannot resolve."""
    from geomprobe.models.registry import MODELS

    if not name:
        raise ConfigError("--models has an empty entry: give comma-separated model specs")
    if name in MODELS:
        return
    from geomprobe.models.loading import resolve

    resolve(name)  # a local directory's config.json and weights, a hub id's form, or an unknown alias


def _is_local_dir(name: str) -> bool:
    return name not in _aliases() and Path(name).expanduser().is_dir()


def _model_revisions(names: list[str], revisions: str | None) -> tuple[list[tuple[str, str | None]], list[str]]:
    """(model, revision) of every job, in order and each once (a local directory by its absolute
    path), and one line per --models entry that does not resolve (all of them, not the first)."""
    from geomprobe.models.registry import parse_model_spec

    pairs: dict[tuple[str, str | None], None] = {}
    problems = []
    for spec in names:
        name, own = parse_model_spec(spec)  # a model's own @revisions stand instead of --revisions
        try:
            _check_model(name)
            if _is_local_dir(name):
                name = str(Path(name).expanduser().resolve())
            found = model_revisions(name, own if own is not None else revisions)
        except GeomprobeError as error:
            problems.append(one_line(error))
            continue
        pairs.update(dict.fromkeys((name, revision) for revision in found))
    # main and the checkpoint it equals, asked for by two entries (pythia-160m@all,pythia-160m): run once
    twice = [name for name, revision in pairs if revision is None and _final_revision(name) is not None
             and (name, _final_revision(name)) in pairs]
    return [pair for pair in pairs if pair[1] is not None or pair[0] not in twice], problems


def run_names(models: list[str]) -> dict[str, str]:
    """model -> the name of its run directories (`<name>@<revision>`): an alias or hub id by its
    slug; a local directory by its last path component, with as many parent components as it takes
    to differ from the others (`a_wt`, `b_wt`), and a number when even the whole path does not."""
    from geomprobe.runner import default_out

    local = {m: [p for p in Path(m).parts if p != Path(m).anchor] for m in models if _is_local_dir(m)}
    depth = dict.fromkeys(local, 1)

    def name_of(model: str) -> str:
        return default_out("_".join(local[model][-depth[model]:]) if model in local else model).name

    while True:
        groups: dict[str, list[str]] = {}
        for model in models:
            groups.setdefault(name_of(model), []).append(model)
        deeper = [m for group in groups.values() if len(group) > 1 for m in group
                  if m in local and depth[m] < len(local[m])]
        if not deeper:
            break
        for model in deeper:
            depth[model] += 1
    names, taken = {}, set()
    for model in models:
        name, n = name_of(model), 1
        while name in taken:
            n += 1
            name = f"{name_of(model)}-{n}"
        names[model] = name
        taken.add(name)
    return names


# ---------------------------------------------------------------------------------------------
# the pre-check: every hub model's revisions are at hand before any job starts


def _hub_config(repo_id: str, *, revision: str | None = None, local_files_only: bool = False) -> str:
    """A hub model's config.json at a revision, for loading._from_pretrained (so the check is the
    loader's own: the cache first, then the hub when it is reachable, and its one-line
    ModelNotFoundError): from the local Hugging Face cache with its weights beside it, else
    downloaded (config.json only, never weights). Raises OSError, as transformers does, when it is
    not at hand."""
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import EntryNotFoundError, HFValidationError

    from geomprobe.models.loading import WEIGHT_FILES

    try:
        config = hf_hub_download(repo_id, "config.json", revision=revision, local_files_only=local_files_only)
    except (EntryNotFoundError, HFValidationError) as error:  # no config.json, or no repo id: "not found"
        raise OSError(one_line(error)) from error
    if local_files_only and not any(next(Path(config).parent.glob(p), None) for p in WEIGHT_FILES):
        raise OSError(f"{repo_id}: config.json is in the cache but no weights")
    return config


def _fetch_error(source, revision: str | None) -> str | None:
    """None when `source` at `revision` is in the cache or fetchable, else the loader's one line."""
    from geomprobe.errors import ModelNotFoundError
    from geomprobe.models.loading import _from_pretrained

    try:
        _from_pretrained(_hub_config, dataclasses.replace(source, revision=revision))
    except ModelNotFoundError as error:
        return one_line(error)
    return None


def _in_cache(source, revision: str | None) -> bool:
    try:
        _hub_config(source.source, revision=revision, local_files_only=True)
    except OSError:
        return False
    return True


def _hub_online() -> bool:
    """Whether a hub model missing from the cache could be fetched now (loading._from_pretrained's
    own test: HF_HUB_OFFLINE unset, and the hub answers)."""
    from geomprobe.models.loading import _hub_reachable

    offline = os.environ.get("HF_HUB_OFFLINE", "0") not in ("0", "", "false", "False")
    return not offline and _hub_reachable()


def _hub_problem(source, revisions: list, online) -> str | None:
    """One line when some revisions of a hub model are neither in the cache nor fetchable: the
    loader's message for the first, the others named after it."""
    from concurrent.futures import ThreadPoolExecutor

    missing = [r for r in revisions if not _in_cache(source, r)]
    if not missing:
        return None
    errors = [_fetch_error(source, missing[0])]
    if len(missing) > 1:
        if errors[0] is None or online():  # the hub answers: ask it for each (config.json only)
            with ThreadPoolExecutor(max_workers=8) as pool:
                errors += list(pool.map(lambda r: _fetch_error(source, r), missing[1:]))
        else:  # out of reach: none of the others can be fetched either
            errors += [errors[0]] * (len(missing) - 1)
    failed = [(r, e) for r, e in zip(missing, errors) if e is not None]
    if not failed:
        return None
    others = [r or "main" for r, _ in failed[1:]]
    if len(others) > 6:
        others = others[:3] + ["..."] + others[-2:]
    return failed[0][1] + (f" (and {len(failed) - 1} more revision(s) of it: {', '.join(others)})" if others else "")


def source_problems(pairs: list[tuple[str, str | None]]) -> list[str]:
    """One line per hub model (alias or hub id) some of whose revisions are neither in the local
    Hugging Face cache (config.json and weights) nor fetchable now. Local directories and
    revisions were checked as the jobs were listed; geomprobe's own models are made by their job."""
    from geomprobe.models.loading import resolve
    from geomprobe.models.registry import MODELS

    hub: dict[str, tuple] = {}  # model -> (its hub source, the revisions wanted)
    for name, revision in pairs:
        if (name in MODELS and MODELS[name].kind != "hub") or _is_local_dir(name):
            continue
        source = resolve(name if revision is None else f"{name}@{revision}")  # no download: the hub id
        if not source.is_local:  # (an alias may have a packaged copy)
            hub.setdefault(name, (source, []))[1].append(revision)
    known: list[bool] = []

    def online() -> bool:  # asked once per sweep, and only when something is missing
        if not known:
            known.append(_hub_online())
        return known[0]

    problems = [_hub_problem(source, wanted, online) for source, wanted in hub.values()]
    return [problem for problem in problems if problem is not None]


def _option_name(key: str, specs: dict) -> str:
    """An option of the [options] table, by field name (n_per_quintile) or flag (n-per-quintile,
    --lambda) -> its field name."""
    field = key.strip().lstrip("-").replace("-", "_")
    if field in specs:
        return field
    for name, spec in specs.items():
        if spec.flag.lstrip("-") == key.strip().lstrip("-"):
            return name
    import difflib

    close = difflib.get_close_matches(field, list(specs), n=3, cutoff=0.6)
    raise ConfigError(f"unknown option '{key}'" + (f" (did you mean {', '.join(close)}?)" if close else "")
                      + ": see `geomprobe run --help`")


def _list(value, what: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return [v.strip() for v in value if v.strip()]
    raise ConfigError(f"{what} takes a comma-separated string or a list of strings, not {value!r}")


def read_sweep_file(path: str | Path) -> dict:
    """A sweep file (TOML; YAML when pyyaml is installed; JSON) -> its settings as keyword
    arguments of build_sweep. Top level: models, revisions, suites, out, and the executor settings
    (executor, time, gpus_per_job, partition, mem_gb, cpus_per_job, array_parallelism,
    slurm_account, slurm_qos); an [options] table holds `geomprobe run` options by name."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"--file {path}: no such file")
    text = path.read_text(encoding="utf-8")
    suffix = path.suffix.lower()
    try:
        if suffix in (".yaml", ".yml"):
            try:
                import yaml
            except ImportError:
                raise ConfigError(f"--file {path}: YAML needs pyyaml (pip install pyyaml); or write it as TOML") from None
            data = yaml.safe_load(text)
        elif suffix == ".json":
            data = json.loads(text)
        else:
            try:
                import tomllib
            except ImportError:  # Python 3.10
                try:
                    import tomli as tomllib
                except ImportError:
                    raise ConfigError(f"--file {path}: reading TOML on Python 3.10 needs tomli (pip install tomli)") \
                        from None
            data = tomllib.loads(text)
    except ConfigError:
        raise
    except Exception as error:  # noqa: BLE001 - each parser raises its own type
        first = (str(error).strip().splitlines() or [type(error).__name__])[0]
        raise ConfigError(f"--file {path} cannot be read: {first}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"--file {path}: expected a table of settings (models = [...], suites = ..., out = ...)")
    data = {key.replace("-", "_"): value for key, value in data.items()}
    allowed = {"models", "revisions", "suites", "suite", "out", "options", *EXECUTOR_FIELDS}
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise ConfigError(f"--file {path}: unknown setting(s) {', '.join(unknown)}; the top level takes "
                          f"{', '.join(sorted(allowed - {'suite'}))}, and [options] any `geomprobe run` option")
    options = data.pop("options", None) or {}
    if not isinstance(options, dict):
        raise ConfigError(f"--file {path}: options must be a table of `geomprobe run` options")
    if "suite" in data:
        data["suites"] = data.pop("suite")
    revisions = data.get("revisions")
    if isinstance(revisions, (list, tuple)):
        data["revisions"] = ",".join(str(r) for r in revisions)
    elif revisions is not None and not isinstance(revisions, str):
        raise ConfigError(f"--file {path}: revisions takes a string or a list of strings")
    suites = data.get("suites")
    if isinstance(suites, (list, tuple)):
        data["suites"] = ",".join(_list(suites, "suites"))
    data["options"] = options
    return data


def build_sweep(*, models, out, suites: str | None = None, revisions: str | None = None, options: dict | None = None,
                **executor) -> Sweep:
    """Validate a sweep and list its jobs, loading nothing and writing nothing but the config.json
    of a hub model's revision that is not cached while the hub is reachable (into the Hugging Face
    cache). options: `geomprobe run` options by field name (or flag name), values as on the command
    line or native (15, true, [0, 5]); executor: ExecutorOptions fields. Every option is checked
    through the same config dataclasses as `geomprobe run`, so errors are the same one-liners; every
    model and revision is checked (source_problems), all problems in one ConfigError, a line each."""
    from geomprobe.commandline import build_configs
    from geomprobe.suites import parse_suites

    specs = option_specs()
    given = {}
    for key, value in (options or {}).items():
        name = _option_name(key, specs)
        if name in PER_JOB:
            raise ConfigError(f"--{name} is set per job by the sweep: use --models, --revisions and --out (the "
                              "sweep directory) instead")
        if value is not None:
            given[name] = value
    if "prompts" in given and isinstance(given["prompts"], (str, os.PathLike)):
        given["prompts"] = str(Path(given["prompts"]).expanduser().resolve())
    executor = ExecutorOptions(**{k: v for k, v in executor.items() if v is not None})
    if executor.executor == "slurm" and executor.time is None:
        raise ConfigError("--executor slurm needs --time (minutes per job), e.g. --time 120")
    names = _list(models, "--models")
    if not names:
        raise ConfigError("--models needs at least one model, e.g. --models pythia-160m,pythia-410m (or --file)")
    if out is None or not str(out).strip():
        raise ConfigError("--out needs the sweep directory, e.g. --out sweeps/pythia (or out = ... in --file)")
    suite_text = suites or "extract"
    suite_names = parse_suites(suite_text)
    skip_unsupported = "all" in [s.strip() for s in suite_text.split(",")]
    run_config, configs = build_configs(suite_text, dict(given))  # every option, checked once for all jobs
    suite_options = {c.suite: json.loads(json.dumps(c.to_dict())) for c in configs}
    pairs, problems = _model_revisions(names, revisions)
    problems += source_problems(pairs)
    if problems:
        raise ConfigError(problems[0] if len(problems) == 1 else f"{len(problems)} problems with the sweep's models; "
                          "nothing was started:\n" + "\n".join(f"  {line}" for line in problems))
    slugs = run_names(list(dict.fromkeys(name for name, _ in pairs)))
    jobs = []
    for name, revision in pairs:  # each once; run names unique per model, so one run directory per job
        job = f"{slugs[name]}@{revision or 'main'}"
        fields = dataclasses.replace(run_config, model=name, revision=revision).fingerprint(revision)
        jobs.append({"name": job, "model": name, "revision": revision, "suites": suite_names,
                     "run_dir": f"{RUNS}/{job}", "expect": {k: fields[k] for k in RUN_IDENTITY},
                     "status": "pending", "error": None})
    spec = {"models": names, "revisions": revisions, "suites": suite_text, "options": given,
            "skip_unsupported": skip_unsupported, "suite_options": suite_options, **executor.to_dict()}
    return Sweep(out=Path(out).expanduser(), spec=spec, jobs=jobs, executor=executor)


# ---------------------------------------------------------------------------------------------
# the truth: run directories


def _read_manifest(run_dir: Path) -> dict | None:
    try:
        manifest = json.loads((run_dir / "manifest.json").read_text())
    except (OSError, ValueError):
        return None
    return manifest if isinstance(manifest, dict) else None


def _conflict(job: dict, spec: dict, manifest: dict | None) -> str | None:
    """Why the job's existing run directory holds another configuration (what the runner would
    refuse without --overwrite), or None."""
    from geomprobe.rundir import _differences

    if manifest is None:
        return None
    config = manifest.get("config") or {}
    ours = job["expect"]
    theirs = {k: config.get(k) for k in ours}
    if ours != theirs:
        return "; ".join(_differences(ours, theirs))
    for name in job["suites"]:
        before = (manifest.get("suites") or {}).get(name) or {}
        wanted = spec["suite_options"].get(name)
        if before.get("status") == "complete" and "options" in before and before["options"] != wanted:
            return f"the {name} suite finished with other options ({'; '.join(_differences(wanted, before['options']))})"
    return None


def job_done(job: dict, spec: dict, manifest: dict | None) -> bool:
    """The run directory is complete for every requested suite, with the same options and model
    settings (skipped suites count as done under `--suites all`)."""
    if manifest is None or manifest.get("status") != "complete" or _conflict(job, spec, manifest) is not None:
        return False
    suites = manifest.get("suites") or {}
    for name in job["suites"]:
        entry = suites.get(name) or {}
        if entry.get("status") == "skipped" and spec.get("skip_unsupported"):
            continue
        if entry.get("status") != "complete":
            return False
    return True


def job_state(out: Path, job: dict, spec: dict, slurm_states: dict | None = None) -> tuple[str, str | None]:
    """(done | running | failed | pending, detail) of a job, from its run directory (and the
    sweep's record where the run directory has nothing to say)."""
    from geomprobe.locks import is_locked

    run_dir = out / job["run_dir"]
    holder = is_locked(run_dir)
    if holder is not None:
        return "running", holder
    manifest = _read_manifest(run_dir)
    queue = (slurm_states or {}).get(str(job.get("job_id")))
    if job_done(job, spec, manifest):
        return "done", None
    if queue in ("RUNNING", "COMPLETING"):
        return "running", f"slurm job {job.get('job_id')}"
    if queue in ("PENDING", "CONFIGURING", "REQUEUED", "RESIZING", "SUSPENDED"):
        return "pending", f"queued (slurm job {job.get('job_id')})"
    suites = (manifest or {}).get("suites") or {}
    failed = [(n, suites[n]) for n in job["suites"] if (suites.get(n) or {}).get("status") in ("failed", "interrupted")]
    if failed:
        name, entry = failed[0]
        return "failed", f"{name} suite {entry['status']}: {entry.get('error') or '?'}"
    if job.get("status") == "failed":
        return "failed", job.get("error")
    if manifest is not None and manifest.get("status") == "running":
        return "failed", "stopped mid-run (killed?): rerun the sweep to resume"
    if job.get("status") == "submitted":
        result = read_result(out, job)
        if result is not None and result.get("status") == "failed":
            return "failed", result.get("error")
        if result is None and slurm_states is not None and job.get("executor") == "slurm" and queue is None:
            return "failed", (f"slurm job {job.get('job_id')} is no longer queued and left no result (time limit, "
                              f"memory, node failure?): see {LOGS}/{job.get('job_id')}_0_log.err; rerun the sweep")
        return "pending", f"submitted (job {job.get('job_id')})"
    return "pending", None


# ---------------------------------------------------------------------------------------------
# the job (runs in the executor's process)


def run_job(payload: dict) -> dict:
    """One sweep job: geomprobe.runner.run on one model for all its suites, into its own run
    directory. Returns {"status": "complete" | "failed", "error", "seconds", "host", "pid"}; a
    failure is a one-line error (its traceback goes to the job's log).

    The job's log (submitit's stderr file, a SLURM job's output) carries geomprobe's own lines, so
    `tail -f` follows it: a first line naming the job, the log records the command line shows
    (INFO), each suite's progress as plain lines every tenth of its work, and a last line with the
    job's status and seconds."""
    import socket

    from geomprobe.console import cli_logging

    started = time.time()
    info = {"host": socket.gethostname(), "pid": os.getpid(), "gpus": os.environ.get("CUDA_VISIBLE_DEVICES")}
    where = f"{payload['model']}{'@' + payload['revision'] if payload.get('revision') else ''}"
    label = payload.get("name") or where
    print(f"geomprobe sweep job {label}: {where}, suites {payload['suites']}, into "
          f"{payload['run_dir']} (host {info['host']}, pid {info['pid']})", file=sys.stderr, flush=True)
    try:
        from geomprobe.commandline import build_configs
        from geomprobe.runner import run

        _quiet_libraries()
        given = {**payload["options"], "model": payload["model"], "out": payload["run_dir"]}
        if payload.get("revision"):
            given["revision"] = payload["revision"]
        run_config, configs = build_configs(payload["suites"], given)
        with cli_logging():
            run(run_config, configs, progress=True, skip_unsupported=payload["skip_unsupported"])
    except Exception as error:  # noqa: BLE001 - recorded, and the sweep goes on
        traceback.print_exc()
        seconds = round(time.time() - started, 2)
        print(f"geomprobe sweep job {label}: failed after {seconds:.0f} s: {one_line(error)}", file=sys.stderr,
              flush=True)
        return _write_result(payload, {**info, "status": "failed", "error": one_line(error), "seconds": seconds})
    seconds = round(time.time() - started, 2)
    print(f"geomprobe sweep job {label}: complete in {seconds:.0f} s", file=sys.stderr, flush=True)
    return _write_result(payload, {**info, "status": "complete", "error": None, "seconds": seconds})


def one_line(error: BaseException) -> str:
    text = (str(error).strip().splitlines() or [""])[0]
    if isinstance(error, GeomprobeError):
        return text or type(error).__name__
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def _quiet_libraries() -> None:
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    try:
        import transformers

        transformers.utils.logging.set_verbosity_error()
        transformers.utils.logging.disable_progress_bar()
    except Exception:  # noqa: BLE001 - cosmetic
        pass


def _payload(out: Path, job: dict, spec: dict) -> dict:
    """What one job runs, with a fresh token naming the JSON file it leaves its result in
    (result_path): the sweep reads that, never submitit's pickles, which would run code from a
    crafted sweep folder when unpickled."""
    import uuid

    token = uuid.uuid4().hex
    return {"name": job["name"], "model": job["model"], "revision": job["revision"],
            "suites": spec["suites"], "options": spec["options"], "skip_unsupported": spec["skip_unsupported"],
            "run_dir": str((out / job["run_dir"]).resolve()), "token": token,
            "result_path": str(result_path(out, token).resolve())}


def result_path(out: Path, token: str) -> Path:
    """Where the job with this token leaves its result (JSON)."""
    return Path(out) / LOGS / f"result-{token}.json"


def _write_result(payload: dict, result: dict) -> dict:
    """run_job's result, also written as JSON for the sweep to read (atomically; never raises)."""
    if payload.get("result_path"):
        try:
            from geomprobe.rundir import atomic_write_json

            Path(payload["result_path"]).parent.mkdir(parents=True, exist_ok=True)
            atomic_write_json(Path(payload["result_path"]), result)
        except OSError as error:
            print(f"geomprobe sweep job: cannot write {payload['result_path']}: {error}", file=sys.stderr, flush=True)
    return result


def read_result(out: Path, job: dict) -> dict | None:
    """The result a submitted job left (run_job's {"status", "error", ...}), None when there is none
    (yet). Plain JSON only: whatever else lies in the folder is never loaded."""
    token = job.get("token")
    if not isinstance(token, str) or not re.fullmatch(r"[0-9a-f]{32}", token):
        return None
    path = result_path(out, token)
    if not path.exists():
        return None
    try:
        value = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        return {"status": "failed", "error": f"{path} cannot be read ({one_line(error)})"}
    if not isinstance(value, dict) or value.get("status") not in ("complete", "failed"):
        return {"status": "failed", "error": f"{path} is not a job result"}
    error = value.get("error")
    return {**value, "error": None if error is None else one_line(str(error))}


# ---------------------------------------------------------------------------------------------
# the driver


class Record:
    """sweep.json, held by the driver: every change is written at once, atomically, under the sweep
    directory's lock (re-entrant: the driver holds it for the whole sweep)."""

    def __init__(self, out: Path, spec: dict, jobs: list[dict]):
        from geomprobe.rundir import now

        self.out = out
        self.path = out / SWEEP_FILE
        try:
            old = _read_sweep(out) if self.path.exists() else None
        except GeomprobeError:  # a damaged record is rewritten: the run directories hold the truth
            old = None
        before = {job["name"]: job for job in (old or {}).get("jobs", [])}
        for job in jobs:  # keep what the record knows of earlier attempts
            kept = before.get(job["name"])
            if kept is not None:
                for key in ("job_id", "token", "executor", "attempts", "started", "ended", "seconds", "host"):
                    if key in kept:
                        job.setdefault(key, kept[key])
        history = list((old or {}).get("history", []))
        if old is not None and old.get("spec") != spec:
            history.append({"spec": old.get("spec"), "replaced": now()})
        self.data = {"format": FORMAT, "created": (old or {}).get("created") or now(), "updated": now(),
                     "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]), "spec": spec, "jobs": jobs,
                     "history": history}
        self.jobs = {job["name"]: job for job in jobs}

    def save(self) -> None:
        from geomprobe.locks import DirectoryLock
        from geomprobe.rundir import atomic_write_json, now

        self.data["updated"] = now()
        with DirectoryLock(self.out, what="sweep directory"):
            atomic_write_json(self.path, self.data)

    def update(self, name: str, **fields) -> None:
        self.jobs[name].update(fields)
        self.save()


def _read_sweep(out: Path) -> dict:
    from geomprobe.errors import RunDirectoryError

    path = Path(out) / SWEEP_FILE
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise ConfigError(f"{out} has no {SWEEP_FILE}: not a sweep directory (geomprobe sweep --out {out} ...)") \
            from None
    except (OSError, ValueError, UnicodeDecodeError) as error:
        raise RunDirectoryError(f"{path} cannot be read ({one_line(error)}): rerun the sweep to rewrite it") from None
    if not isinstance(data, dict) or not isinstance(data.get("jobs"), list) or not isinstance(data.get("spec"), dict):
        raise RunDirectoryError(f"{path} is not a geomprobe sweep record: rerun the sweep to rewrite it")
    return data


def _check_out(out: Path) -> None:
    if out.resolve() == Path.cwd().resolve():
        raise ConfigError(f"--out {out} is the current directory: a sweep directory is a folder of its own, "
                          "e.g. --out sweeps/mine")
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out} is a file, not a directory: choose another --out")
    if out.is_dir() and not (out / SWEEP_FILE).exists():
        from geomprobe.locks import LOCK_NAME

        others = sorted(child.name for child in out.iterdir() if child.name not in (LOCK_NAME, RUNS, LOGS))
        if others:
            raise ConfigError(f"--out {out} holds other files ({', '.join(others[:3])}{', ...' if len(others) > 3 else ''}"
                              f") and no {SWEEP_FILE}: choose a new or empty directory for the sweep")
    existing = out.resolve()
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise ConfigError(f"--out {out} lies below {existing}, which is a file: choose another --out")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise ConfigError(f"--out {out}: {existing} is not writable by this user; choose another --out")


def preflight(sweep: Sweep) -> None:
    """What can be refused before any job starts: the sweep directory, and run directories that
    hold another configuration (unless --overwrite)."""
    _check_out(sweep.out)
    if sweep.spec["options"].get("overwrite") in (True, "true", "1", "yes"):
        return
    for job in sweep.jobs:
        run_dir = sweep.out / job["run_dir"]
        if (run_dir / "manifest.json").exists() and _read_manifest(run_dir) is None:
            raise ConfigError(f"{run_dir}/manifest.json is corrupt (not valid JSON): pass --overwrite to redo that "
                              "job, or remove the directory")
        why = _conflict(job, sweep.spec, _read_manifest(run_dir))
        if why is not None:
            raise ConfigError(f"{run_dir} holds a run with another configuration ({why}): pass --overwrite to redo it, "
                              "or use another --out")


def run_sweep(sweep: Sweep, *, quiet: bool = False, on_inline=None) -> int:
    """Run (local, inline) or submit (slurm) the jobs that are not done; returns the exit status:
    0, or 1 when a job failed. on_inline: called once before jobs run in this process."""
    from geomprobe.errors import RunDirectoryError
    from geomprobe.locks import DirectoryLock, is_locked
    from geomprobe.rundir import now

    preflight(sweep)
    executor = sweep.executor
    # job progress on stderr, like every suite's (stdout carries the final status table)
    say = (lambda text: None) if quiet else (lambda text: print(text, file=sys.stderr, flush=True))
    plan = _local_slots(sweep) if executor.executor == "local" else None
    slurm = _slurm_executor(sweep) if executor.executor == "slurm" else None
    lock = DirectoryLock(sweep.out, what="sweep directory")
    try:
        lock.acquire()
    except RunDirectoryError as error:
        raise RunDirectoryError(f"{error}".replace("another --out", "another --out (`geomprobe sweep --status "
                                                                    f"{sweep.out}` shows its progress)")) from None
    try:
        record = Record(sweep.out, sweep.spec, sweep.jobs)
        states = _slurm_queue([j.get("job_id") for j in sweep.jobs if j.get("executor") == "slurm"]) or {}
        todo = []
        for job in sweep.jobs:
            run_dir = sweep.out / job["run_dir"]
            if job_done(job, sweep.spec, _read_manifest(run_dir)):
                job.update(status="complete", error=None)
            elif is_locked(run_dir) is not None or states.get(str(job.get("job_id"))) in (
                    "PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "REQUEUED"):
                job.update(status="running" if is_locked(run_dir) else "submitted")
                say(f"{job['name']}: running elsewhere ({is_locked(run_dir) or 'slurm job ' + str(job['job_id'])}); "
                    "left alone")
            else:
                job.update(status="pending", error=None)
                todo.append(job)
        record.save()
        done = sum(job["status"] == "complete" for job in sweep.jobs)
        say(f"sweep {sweep.out}: {len(sweep.jobs)} jobs, {done} done, {len(todo)} to run ({executor.executor})")
        if executor.executor == "slurm":
            if todo:
                _submit_slurm(slurm, sweep, record, todo, say)
        elif executor.executor == "inline":
            if todo and on_inline is not None:
                on_inline()
            for index, job in enumerate(todo, 1):
                record.update(job["name"], status="running", started=now(), ended=None, seconds=None, executor="inline",
                              job_id=None, attempts=job.get("attempts", 0) + 1)
                try:
                    result = run_job(_payload(sweep.out, job, sweep.spec))
                except KeyboardInterrupt:
                    record.update(job["name"], status="interrupted", ended=now(), error="interrupted: the sweep was stopped")
                    raise KeyboardInterrupt(_STOPPED.format(out=sweep.out)) from None
                _finish(record, job, result, say, f"[{index}/{len(todo)}]")
        else:
            _run_local(sweep, record, todo, plan, say)
    finally:
        lock.release()
    if not quiet:
        print_status(sweep.out)
    if executor.executor == "slurm":
        return 0
    return 1 if any(job["status"] == "failed" for job in sweep.jobs) else 0


_STOPPED = "the sweep was stopped; {out} keeps the finished work: rerun the same command to resume"


def _finish(record: Record, job: dict, result: dict, say, prefix: str) -> None:
    from geomprobe.rundir import now

    record.update(job["name"], status=result["status"], error=result.get("error"), ended=now(),
                  seconds=result.get("seconds"), host=result.get("host"), cuda_visible_devices=result.get("gpus"))
    if result["status"] == "complete":
        say(f"{prefix} {job['name']}: complete ({result.get('seconds', 0):.0f} s)")
    else:
        say(f"{prefix} {job['name']}: failed: {result.get('error')}")


def _visible_gpus() -> list[str]:
    """The GPUs this process may use, as CUDA_VISIBLE_DEVICES entries (indices or UUIDs)."""
    if not any(Path(p).exists() for p in ("/dev/nvidiactl", "/dev/kfd")) and shutil.which("nvidia-smi") is None:
        return []  # no GPU driver here: skip importing torch (a second of the driver's start)
    try:
        import torch

        count = torch.cuda.device_count()
    except Exception:  # noqa: BLE001 - no usable CUDA: a CPU sweep
        count = 0
    if count == 0:
        return []
    given = os.environ.get("CUDA_VISIBLE_DEVICES")
    entries = [e.strip() for e in given.split(",") if e.strip()] if given else []
    return entries[:count] if len(entries) >= count else [str(i) for i in range(count)]


def _local_slots(sweep: Sweep) -> list[dict]:
    """The local executor's concurrent slots, each the submitit parameters of the jobs it runs: one
    slot on a CPU (or with --device cpu); with N visible GPUs, N // gpus-per-job slots, each pinned
    to its own GPUs (CUDA_VISIBLE_DEVICES)."""
    options = sweep.spec["options"]
    device = str(options.get("device") or "auto")
    base = {"timeout_min": sweep.executor.time or LOCAL_TIMEOUT_MIN}
    gpus = [] if device == "cpu" else _visible_gpus()
    if not gpus:
        if device.startswith("cuda"):
            raise ConfigError(f"--device {device}: this machine shows torch no CUDA GPU; use --device cpu or auto")
        return [{**base, "gpus_per_node": 0}]
    per_job = sweep.executor.gpus_per_job
    if per_job is None:
        per_job = len(gpus) if options.get("device_map") or re.fullmatch(r"cuda:\d+", device) else 1
    if per_job == 0:
        raise ConfigError(f"--gpus-per-job 0 with --device {device}: pass --device cpu to run on the CPU")
    if per_job > len(gpus):
        raise ConfigError(f"--gpus-per-job {per_job}: this machine shows {len(gpus)} GPU(s)")
    slots = []
    for start in range(0, len(gpus) - per_job + 1, per_job):
        group = gpus[start:start + per_job]
        if all(g.isdigit() for g in group):
            slots.append({**base, "gpus_per_node": len(group), "visible_gpus": tuple(int(g) for g in group)})
        else:  # UUIDs or MIG names: submitit takes indices only, so the job's shell sets them
            slots.append({**base, "gpus_per_node": 0, "setup": [f"export CUDA_VISIBLE_DEVICES={','.join(group)}"]})
    return slots


def _outcome(out: Path, job: dict, sjob) -> dict:
    """What a finished job left: its run_job result (the JSON file, never submitit's pickle), or why
    there is none."""
    result = read_result(out, job)
    if result is not None:
        return result
    return {"status": "failed", "error": f"the job's process ended without a result (killed, out of memory, or it "
                                         f"raised outside the run?); log: {sjob.paths.stderr}; rerun the sweep to "
                                         "resume it"}


def _run_local(sweep: Sweep, record: Record, todo: list[dict], slots: list[dict], say) -> None:
    import submitit

    from geomprobe.rundir import now

    executor = submitit.LocalExecutor(folder=sweep.out / LOGS)
    pending, running, finished = list(todo), {}, 0
    try:
        while pending or running:
            for index, params in enumerate(slots):
                if index in running or not pending:
                    continue
                job = pending.pop(0)
                executor.parameters.clear()  # this slot's GPUs only, none left from another slot
                executor.update_parameters(**params)
                payload = _payload(sweep.out, job, sweep.spec)
                sjob = executor.submit(run_job, payload)
                record.update(job["name"], status="running", started=now(), ended=None, seconds=None, error=None,
                              executor="local", job_id=str(sjob.job_id), token=payload["token"],
                              attempts=job.get("attempts", 0) + 1,
                              gpus=",".join(map(str, params.get("visible_gpus", ()))) or None)
                running[index] = (job, sjob)
            for index, (job, sjob) in list(running.items()):
                if sjob.done():
                    del running[index]
                    finished += 1
                    _finish(record, job, _outcome(sweep.out, record.jobs[job["name"]], sjob), say,
                            f"[{finished}/{len(todo)}]")
            if running:
                time.sleep(POLL_S)
    except BaseException as error:
        for job, sjob in running.values():
            sjob.cancel(check=False)  # SIGINT to the job: its run directory marks the suite interrupted
            record.update(job["name"], status="interrupted", ended=now(), error="interrupted: the sweep was stopped")
        if isinstance(error, KeyboardInterrupt):
            raise KeyboardInterrupt(_STOPPED.format(out=sweep.out)) from None
        raise


# ---------------------------------------------------------------------------------------------
# slurm


def slurm_parameters(executor: ExecutorOptions) -> dict:
    """submitit AutoExecutor parameters of the slurm executor's settings."""
    params = {"name": "geomprobe-sweep", "timeout_min": executor.time,
              "gpus_per_node": 1 if executor.gpus_per_job is None else executor.gpus_per_job,
              "mem_gb": executor.mem_gb, "cpus_per_task": executor.cpus_per_job, "slurm_partition": executor.partition,
              "slurm_array_parallelism": executor.array_parallelism, "slurm_account": executor.slurm_account,
              "slurm_qos": executor.slurm_qos}
    return {k: v for k, v in params.items() if v is not None}


def _slurm_executor(sweep: Sweep):
    """A submitit AutoExecutor for slurm with the sweep's parameters (nothing submitted)."""
    import submitit

    try:
        executor = submitit.AutoExecutor(folder=sweep.out / LOGS, cluster="slurm")
    except RuntimeError as error:
        raise ConfigError(f"--executor slurm: {one_line(error)} (this machine has no srun: run the sweep on the "
                          "cluster's login node, or use --executor local)") from None
    try:
        executor.update_parameters(**slurm_parameters(sweep.executor))
    except (ValueError, NameError, AssertionError) as error:
        raise ConfigError(f"--executor slurm: submitit refuses the parameters: {one_line(error)}") from None
    return executor


def slurm_script(executor, n_jobs: int) -> str:
    """The sbatch script submitit would submit for an array of n_jobs (for --dry-run and tests)."""
    from submitit.slurm.slurm import SlurmExecutor

    inner = getattr(executor, "_executor", executor)
    array = SlurmExecutor.__new__(SlurmExecutor)  # no srun check: only the text is made
    array.folder, array.parameters, array.python = inner.folder, dict(inner.parameters), inner.python
    if n_jobs > 1:
        array.parameters["map_count"] = n_jobs
    return array._make_submission_file_text(inner._submitit_command_str, "preview")


def _submit_slurm(executor, sweep: Sweep, record: Record, todo: list[dict], say) -> None:
    from geomprobe.rundir import now

    payloads = [_payload(sweep.out, job, sweep.spec) for job in todo]
    try:
        with executor.batch():
            sjobs = [executor.submit(run_job, payload) for payload in payloads]
    except Exception as error:  # noqa: BLE001 - sbatch's own refusal, in one line
        raise ConfigError(f"sbatch refused the array: {one_line(error)}") from None
    for job, sjob, payload in zip(todo, sjobs, payloads):
        record.jobs[job["name"]].update(status="submitted", executor="slurm", job_id=str(sjob.job_id),
                                        token=payload["token"], submitted=now(),
                                        attempts=job.get("attempts", 0) + 1, started=None, ended=None, error=None)
    record.save()
    first = str(sjobs[0].job_id).split("_")[0]
    say(f"submitted {len(sjobs)} job(s) as slurm array {first}; logs in {sweep.out / LOGS}; "
        f"follow them with `geomprobe sweep --status {sweep.out}`")


def _slurm_queue(job_ids) -> dict[str, str] | None:
    """job id -> state from squeue for the ids still in the queue; {} when none is (or there is no
    id); None when the queue cannot be read (no squeue, or it failed), so nothing is inferred."""
    import subprocess

    ids = sorted({str(i).split("_", 1)[0] for i in job_ids if i})  # an array's id covers its tasks (-r lists them)
    if not ids:
        return {}
    if shutil.which("squeue") is None:
        return None
    try:
        done = subprocess.run(["squeue", "-h", "-r", "-o", "%i %T", "-j", ",".join(ids)], capture_output=True,
                              text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0 and "invalid job id" not in done.stderr.lower():  # finished ids are "invalid"
        return None
    return {parts[0]: parts[1].strip() for parts in (line.split(None, 1) for line in done.stdout.splitlines())
            if len(parts) == 2}


# ---------------------------------------------------------------------------------------------
# status


def status_rows(out: str | Path) -> tuple[dict, list[dict]]:
    """(sweep record, one row per job: name, model, revision, state, detail, suites done, seconds,
    job id) with the states read from the run directories."""
    out = Path(out)
    data = _read_sweep(out)
    spec = data["spec"]
    states = _slurm_queue([j.get("job_id") for j in data["jobs"] if j.get("executor") == "slurm"])
    rows = []
    for job in data["jobs"]:
        state, detail = job_state(out, job, spec, states)
        manifest = _read_manifest(out / job["run_dir"]) or {}
        suites = manifest.get("suites") or {}
        n_done = sum((suites.get(n) or {}).get("status") in ("complete", "skipped") for n in job["suites"])
        rows.append({"name": job["name"], "model": job["model"], "revision": job["revision"], "state": state,
                     "detail": detail, "suites_done": n_done, "suites": len(job["suites"]),
                     "seconds": job.get("seconds"), "job_id": job.get("job_id"), "run_dir": job["run_dir"]})
    return data, rows


STATES = ("done", "running", "failed", "pending")


def _totals(rows: list[dict]) -> dict[str, int]:
    return {state: sum(row["state"] == state for row in rows) for state in STATES}


def status_json(out: str | Path) -> dict:
    """`--status DIR --json`: the sweep's directory, suites, driver (who holds its lock, or None),
    totals per state, and its jobs as status_rows gives them (name, model, revision, state, detail,
    suites_done, suites, seconds, job_id, run_dir)."""
    from geomprobe.locks import is_locked

    data, rows = status_rows(out)
    return {"sweep": str(out), "suites": data["spec"]["suites"], "driver": is_locked(out), "totals": _totals(rows),
            "jobs": rows}


def print_status(out: str | Path) -> dict[str, int]:
    """Print the jobs' table and totals; returns the totals."""
    from rich.markup import escape
    from rich.table import Table

    from geomprobe.console import table_console
    from geomprobe.locks import is_locked

    data, rows = status_rows(out)
    totals = _totals(rows)
    table = Table(title=f"sweep {out}: {data['spec']['suites']} on {len(rows)} job(s)")
    for column in ("job", "state", "suites", "time", "job id", "detail"):
        table.add_column(column, justify="right" if column in ("suites", "time") else "left")
    colours = {"done": "green", "running": "cyan", "failed": "red", "pending": "yellow"}
    for row in rows:
        seconds = row["seconds"]
        table.add_row(escape(row["name"]), f"[{colours[row['state']]}]{row['state']}[/]",
                      f"{row['suites_done']}/{row['suites']}", "-" if seconds is None else f"{seconds:.0f} s",
                      escape(str(row["job_id"] or "-")), escape(row["detail"] or ""))
    console = table_console()
    console.print(table)
    driver = is_locked(out)
    console.print(f"{len(rows)} jobs: " + ", ".join(f"{totals[s]} {s}" for s in STATES)
                  + (f"  (driver: {escape(driver)})" if driver else ""), highlight=False)
    return totals


# ---------------------------------------------------------------------------------------------
# the command line


class SweepClickCommand(SuiteAwareCommand):
    """`geomprobe sweep --suites S --help` shows the model options and S's (like `run --suite S`)."""

    def parse_args(self, ctx, args):
        ctx.meta["geomprobe_suites"] = selected_suites(["--suite" if a == "--suites" else
                                                        a.replace("--suites=", "--suite=", 1) for a in args])
        return typer.core.TyperCommand.parse_args(self, ctx, args)


def _sweep_parameters() -> list[inspect.Parameter]:
    def param(name, annotation, default):
        return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation, default=default)

    params = [
        param("sweep_models", Optional[str], typer.Option(
            None, "--models", help="comma-separated model specs (aliases, hub ids, local or wind-tunnel training "
                                   "directories); MODEL@REVISIONS gives one model its own revisions (one, all or "
                                   "log:N) instead of --revisions", rich_help_panel=SWEEP_PANEL)),
        param("sweep_revisions", Optional[str], typer.Option(
            None, "--revisions", help="comma-separated revisions of every model, all, or log:N (N log-spaced "
                                      "checkpoints with the first and the last: Pythia's 154, or a wind tunnel's); "
                                      "default: the main / final model", rich_help_panel=SWEEP_PANEL)),
        param("sweep_suites", Optional[str], typer.Option(
            None, "--suites", "--suite", help="suites of every job, comma-separated or all (default extract)",
            rich_help_panel=SWEEP_PANEL)),
        param("sweep_out", Optional[str], typer.Option(
            None, "--out", help="sweep directory: sweep.json, runs/<model>@<revision>/, logs/",
            rich_help_panel=SWEEP_PANEL)),
        param("sweep_file", Optional[Path], typer.Option(
            None, "--file", help="the sweep as a file (TOML, or YAML with pyyaml): models, revisions, suites, out, "
                                 "executor settings, and an options table; options given here override it",
            rich_help_panel=SWEEP_PANEL)),
        param("sweep_status", Optional[Path], typer.Option(
            None, "--status", help="print the state of each job of the sweep in DIR (done / running / failed / "
                                   "pending) and the totals, then exit", rich_help_panel=SWEEP_PANEL,
            metavar="DIR")),
        param("sweep_json", bool, typer.Option(
            False, "--json", help="with --status: print the status as JSON (totals, and per job its state, "
                                  "detail, suites done, time, job id and run directory)", rich_help_panel=SWEEP_PANEL)),
        param("sweep_dry_run", bool, typer.Option(
            False, "--dry-run", help="list the jobs (and, for slurm, print the sbatch script) without running them",
            rich_help_panel=SWEEP_PANEL)),
    ]
    for field in dataclasses.fields(ExecutorOptions):
        kind = {"executor": str, "partition": str, "slurm_account": str, "slurm_qos": str}.get(field.name, str)
        metavar = {"executor": "local|inline|slurm", "time": "MINUTES", "mem_gb": "GB", "gpus_per_job": "INT",
                   "cpus_per_job": "INT", "array_parallelism": "INT"}.get(field.name, "TEXT")
        extra = {"metavar": metavar}
        params.append(param(f"sweep_{field.name}", Optional[kind], typer.Option(
            None, "--" + field.name.replace("_", "-"), help=field.metadata["help"], rich_help_panel=EXECUTOR_PANEL,
            show_default=False, **extra)))
    for spec in option_specs().values():
        if spec.name not in PER_JOB:
            params.append(_parameter(spec))
    params.append(param("quiet", bool, typer.Option(False, "--quiet", help="no progress lines or summary table")))
    return params


class SweepCommand:
    """The callback of `geomprobe sweep`; its signature is computed from the suite registry each
    time typer reads it (as `geomprobe run`'s)."""

    def __init__(self, handler, doc: str):
        self.handler = handler
        self.__doc__ = doc
        self.__name__ = "sweep"
        self.__module__ = __name__

    @property
    def __signature__(self):
        return inspect.Signature(_sweep_parameters())

    @property
    def __annotations__(self):
        return {p.name: p.annotation for p in _sweep_parameters()}

    def __call__(self, **kwargs):
        return self.handler(kwargs)


def sweep_from_cli(kwargs: dict, on_inline=None) -> int:
    """`geomprobe sweep`'s body: the exit status (0, or 1 when a job failed)."""
    status = kwargs.get("sweep_status")
    if status is not None:
        given = [k for k, v in kwargs.items() if k not in ("sweep_status", "sweep_json") and v not in (None, False)]
        if given:
            raise ConfigError("--status DIR takes no other option but --json: it only reads the sweep in DIR")
        if kwargs.get("sweep_json"):
            print(json.dumps(status_json(status), indent=2))
        else:
            print_status(status)
        return 0
    if kwargs.get("sweep_json"):
        raise ConfigError("--json goes with --status DIR (the status as JSON): drop it, or add --status DIR")
    settings: dict = {}
    if kwargs.get("sweep_file") is not None:
        settings = read_sweep_file(kwargs["sweep_file"])
    for key, target in (("sweep_models", "models"), ("sweep_revisions", "revisions"), ("sweep_suites", "suites"),
                        ("sweep_out", "out")):
        if kwargs.get(key) is not None:
            settings[target] = kwargs[key]
    for name in EXECUTOR_FIELDS:
        if kwargs.get(f"sweep_{name}") is not None:
            settings[name] = kwargs[f"sweep_{name}"]
    options = dict(settings.pop("options", {}) or {})
    specs = option_specs()
    options.update({k: v for k, v in kwargs.items() if k in specs and v is not None})
    settings.setdefault("models", None)
    settings.setdefault("out", None)
    sweep = build_sweep(options=options, **settings)
    if kwargs.get("sweep_dry_run"):
        _check_out(sweep.out)
        for job in sweep.jobs:
            print(f"{job['model']}{'@' + job['revision'] if job['revision'] else ''} -> {sweep.out / job['run_dir']}")
        print(f"{len(sweep.jobs)} job(s), suites {sweep.spec['suites']}, executor {sweep.executor.executor}")
        if sweep.executor.executor == "slurm":
            print(slurm_script(_slurm_executor(sweep), len(sweep.jobs)))
        return 0
    return run_sweep(sweep, quiet=bool(kwargs.get("quiet")), on_inline=on_inline)
