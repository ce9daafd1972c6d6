"""A sweep from its settings: a sweep file read (read_sweep_file), every option, model and revision
checked, and the jobs listed with the settings a run directory must match for each to be done
(build_sweep)."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

from geomprobe.commandline import option_specs
from geomprobe.errors import ConfigError

from .models import _model_revisions, run_names
from .settings import EXECUTOR_FIELDS, PER_JOB, RUNS, ExecutorOptions, Sweep
from .sources import source_problems

# the fields of a run manifest's config that a job's settings must match for the job to be done
RUN_IDENTITY = ("model", "revision", "dtype", "quantize", "seed", "backend", "max_tokens")


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
    from geomprobe.readers import read_sweep_file as read_settings

    path = Path(path)
    if not path.exists() and not path.is_symlink():
        raise ConfigError(f"--file {path}: no such file")
    data = read_settings(path)  # bounded, parsed by its suffix, checked against schemas.SweepFile
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
