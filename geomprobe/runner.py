"""`run(RunConfig, suites)`: load a model once, open its run directory, and run one or more suites.

The CLI (`geomprobe run`) parses its options into the same objects and calls this; scripts can too:

    from geomprobe import RunConfig, load_run, run
    from geomprobe.suites.sula import SulaConfig
    result = run(RunConfig(model="pythia-410m", dtype="bfloat16"), ["geometry", SulaConfig(n_per_k=100)])
    result.results["sula"], result.table("sula")   # a geomprobe.results.Run: manifest, results, tables
    load_run(result.path)                # the same, read again from the run directory
"""

from __future__ import annotations

import contextlib
import logging
import random
import re
import time
from collections.abc import Iterable
from pathlib import Path

from geomprobe.config import RunConfig
from geomprobe.errors import ConfigError, GeomprobeError
from geomprobe.models.loading import resolve_device

log = logging.getLogger(__name__)


def default_out(model: str) -> Path:
    slug = re.sub(r"[^A-Za-z0-9._@-]+", "_", model.strip("/")).strip("_") or "model"
    return Path("runs") / slug


def seed_everything(seed: int) -> None:
    import numpy as np
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def suite_configs(suites) -> list:
    """A suite name, a suite config, "a,b", "all", or a list of these -> suite configs in run order
    (registry order: extract, geometry, domain, sula, ablation, mechanisms)."""
    from geomprobe.suites import SUITES, SuiteConfig, get_suite, parse_suites

    items = [suites] if isinstance(suites, (str, SuiteConfig)) else list(suites)
    configs = {}
    for item in items:
        if isinstance(item, SuiteConfig):
            configs[item.suite] = item
        elif isinstance(item, str):
            for name in parse_suites(item):
                configs.setdefault(name, get_suite(name).config())
        else:
            raise ConfigError(f"a suite is a name or a suite config, not {type(item).__name__}")
    if not configs:
        raise ConfigError("no suite to run: give a suite name, e.g. 'extract'")
    return [configs[name] for name in SUITES if name in configs]


def _check_layers(config: RunConfig, adapter) -> None:
    for layer in config.layers or ():
        adapter.check_layer(layer)


def plan_check(config: RunConfig, configs: list, device: str) -> tuple[RunConfig, object]:
    """geomprobe.plan's preflight, before anything is loaded: refuse (one line, the plan's numbers)
    a model and batch that cannot fit the device, and choose the batch size when none was given
    (8 on a CPU; on a GPU the largest power of two up to 64 that fits). Returns the config with its
    batch size set, and the plan (its suites' estimates calibrate later plans: geomprobe.timing)."""
    import dataclasses

    from geomprobe.plan import preflight, recommend_batch_size

    given = config.batch_size if isinstance(config.batch_size, int) else None
    planned = preflight(config.model, dataclasses.replace(config, batch_size=given or 8), configs, device=device)
    if not planned.fits and not config.skip_plan_check:
        _refuse_too_long(planned, config)
        raise ConfigError(f"{planned.why}; see `geomprobe plan --model {config.model} ...`, or pass --skip-plan-check "
                          "to try anyway")
    if config.batch_size is None:
        batch = recommend_batch_size(planned) if planned.arch is not None else 8
        config = dataclasses.replace(config, batch_size=batch)
    return config, planned


def resolve_auto_batch(config: RunConfig, loaded, planned) -> tuple[RunConfig, dict | None]:
    """--batch-size auto, once the model is loaded: (the config with the batch found, the record the
    manifest keeps: batch size, tokens probed, how), or the config unchanged and None."""
    if config.batch_size != "auto":
        return config, None
    import dataclasses

    from geomprobe.batching import auto_batch_size, longest_prompt

    start = 8
    tokens = 1
    if planned is not None and getattr(planned, "arch", None) is not None:
        from geomprobe.plan import recommend_batch_size

        start, tokens = recommend_batch_size(planned), longest_prompt(planned)
    batch, how = auto_batch_size(loaded, tokens, start)
    return dataclasses.replace(config, batch_size=batch), {"batch_size": batch, "tokens": tokens, "how": how}


def _refuse_too_long(planned, config: RunConfig) -> None:
    """A plan that does not fit because a prompt is longer than the model's positions: say that (the
    memory of a prompt the model cannot take is not the problem)."""
    arch = planned.arch
    context = getattr(arch, "context", None)
    if arch is None or not context or config.max_tokens is not None:
        return
    longest = max((sweep.lengths.max for suite in planned.suites for sweep in suite.sweeps if sweep.lengths.n),
                  default=0)
    if longest > context:
        about = "about " if "estimat" in (planned.tokens_how or "") else ""
        raise ConfigError(f"a prompt has {about}{longest:,} tokens, more than this model's {context} positions: "
                          f"shorten it or pass --max-tokens {context}")


def windtunnel_preview(spec: str):
    """A stand-in for a built-in wind tunnel that is not trained yet (first use trains it for
    minutes), carrying its task, so that suite pairing is checked before that training; None for
    any other model or a cached wind tunnel."""
    from types import SimpleNamespace

    from geomprobe.models.registry import MODELS, parse_model_spec

    name, _ = parse_model_spec(spec)
    info = MODELS.get(name)
    if info is None or not info.hub_id.startswith("windtunnel:"):
        return None
    from geomprobe.windtunnel.builtin import recipe, windtunnel_dir

    task = info.hub_id.split(":", 1)[1]
    if (windtunnel_dir(task) / "windtunnel.json").exists():
        return None
    return SimpleNamespace(spec=spec, source=str(windtunnel_dir(task)), family=info.family,
                           windtunnel_preview={"task": task, "task_options": recipe(task).task_options},
                           adapter=SimpleNamespace(has_next_token=True, family=info.family))


def _pairing(specs_and_configs, model, config: RunConfig, skip_unsupported: bool) -> dict[str, str]:
    """Suites that cannot run on `model`: skipped (name -> why) when skip_unsupported, else an error."""
    skipped = {}
    for spec, _ in specs_and_configs:
        why = spec.why_not(model, config)
        if why is None:
            continue
        if not skip_unsupported:
            raise ConfigError(f"{spec.name} suite: {why}")
        skipped[spec.name] = why
    return skipped


def run(config: RunConfig, suites: str | object | Iterable = "extract", *, progress: bool | None = None,
        quiet: bool = False, details: bool = False, report: bool = False,
        skip_unsupported: bool | None = None):
    """Run `suites` on `config.model` and return the results as a geomprobe.results.Run. Reruns of
    the same configuration resume: finished extraction batches and passes are kept.

    The Run (load_run of the run directory, config.out, default runs/<model>) holds the manifest,
    every suite's results.json, per-prompt tables (Run.rows, Run.table), headline figures
    (Run.headlines, Run.frame) and the report's figures (Run.figures). It stands for its directory
    where a path is expected: geomprobe.load_extraction(result / "extraction") reads the extract
    suite's arrays (geometry: result / "geometry" / "extraction"; sula: result / "sula" /
    "extraction-main"), result.path is the pathlib.Path.

    suites: a name ("sula"), several ("geometry,sula", "all"), suite configs (SulaConfig(n_per_k=50)),
    or a list of these. The model is loaded once for all of them. With "all" (or skip_unsupported),
    suites that cannot run on this model (the domain suite on a wind tunnel, sula on an encoder) are
    skipped and the manifest says why; a named suite that cannot run is an error.

    Everything that can be checked is checked before the run directory is touched (options, the
    --out path, the prompts, the model and suite pairing, labels and layers against the model), so a
    rejected command changes nothing on disk. One process writes a run directory at a time (a lock);
    a suite that fails is marked failed with its error, Ctrl-C marks it interrupted.

    A run directory holds one model under one set of settings (its fingerprint, which includes a
    hash of a local model's weights); each suite keeps its own prompts and results under
    <run>/<suite>/, so suites can be added to a run one by one. A finished suite is not silently
    replaced by one with other options: that needs overwrite.

    What it prints: progress bars on stderr and, after each suite, a short summary on stdout: its
    headline figures beside the untrained copies' (the geometry suite's three criteria and verdict);
    details=True prints every suite's full tables instead (every layer, baseline and control: the
    command line's --details); progress=False: neither. Log records only where the caller set up
    logging (logging.basicConfig). quiet=True
    prints nothing at all: no bars, tables, notices or warnings, for notebooks and scripts (errors
    are raised as usual); it implies progress=False. The results are in the returned directory:
    load_run(path), whose repr is a few lines and, in Jupyter, a card."""
    from geomprobe.console import silenced

    if quiet and progress:
        raise ConfigError("run: quiet=True prints nothing and progress=True asks for progress bars: pass one of them")
    from geomprobe.results import load_run

    with silenced(quiet):
        path = _run_suites(config, suites, progress=not quiet if progress is None else bool(progress), report=report,
                           skip_unsupported=skip_unsupported, details=bool(details))
    return load_run(path)


def _run_suites(config: RunConfig, suites, *, progress: bool, report: bool, skip_unsupported: bool | None,
                details: bool = False) -> Path:
    """run() after its quiet: load the model (or borrow the object passed in) and run the suites."""
    from geomprobe.models import load_model
    from geomprobe.prompts import given_prompts
    from geomprobe.rundir import check_out
    from geomprobe.suites import get_suite
    from geomprobe.suites.base import limited_configs

    if not isinstance(config, RunConfig):
        raise ConfigError(f"run() takes a RunConfig, not {type(config).__name__}")
    from geomprobe.models.borrowed import is_model_object

    if is_model_object(config.model):
        return _run_borrowed(config, suites, progress=progress, report=report, skip_unsupported=skip_unsupported,
                             details=details)
    configs = limited_configs(suite_configs(suites), config)
    specs = [(get_suite(options.suite), options) for options in configs]
    if skip_unsupported is None:
        skip_unsupported = isinstance(suites, str) and "all" in [s.strip() for s in suites.split(",")]
    finished = None if config.prompts is not None else finished_already(config, configs, skip_unsupported)
    if finished is not None:
        _say_complete(finished, configs, progress, report, details)
        return _tracked(finished, config, quiet=not progress)
    prompts = given_prompts(config.prompts)
    out = check_out(config.out if config.out is not None else default_out(config.model), overwrite=config.overwrite)
    device = resolve_device(config.device)
    config, planned = plan_check(config, configs, device)
    timing = _Timing(planned)
    preview = windtunnel_preview(config.model)
    if preview is not None:  # the pairing, before the first-use training of a wind tunnel
        _pairing(specs, preview, config, skip_unsupported)
        from geomprobe.windtunnel.builtin import ensure_windtunnel

        ensure_windtunnel(preview.windtunnel_preview["task"], progress=progress)  # its bar follows `progress`
    seed_everything(config.seed)
    log.debug("loading %s (dtype %s, device %s, batch size %s)", config.model, config.dtype, device, config.batch_size)
    loaded = load_model(config.model, dtype=config.dtype, device=device, device_map=config.device_map,
                        quantize=config.quantize, revision=config.revision)
    config, batch_record = resolve_auto_batch(config, loaded, planned)
    log.debug("loaded %s from %s (family %s, revision %s)", config.model, loaded.source, loaded.family,
              loaded.revision or "none")
    return _run_loaded(config, loaded, out, specs, skip_unsupported, prompts, progress, report, details, timing,
                       batch_record)


# run_config fields that do not change what a finished suite holds (the batch size never does: a
# prompt's results do not depend on its batch), so a rerun that differs only there is complete
_NOT_RESULTS = ("batch_size", "skip_plan_check", "overwrite", "device", "device_map", "out", "wandb")


def finished_already(config: RunConfig, configs: list, skip_unsupported: bool) -> Path | None:
    """The run directory when it already holds every one of `configs` finished with these settings,
    read from its manifest and the model directory's files without loading torch or the model
    (a rerun that would recompute nothing); None otherwise, and always for hub models (their
    commit is only known once resolved), --overwrite, and a model passed in."""
    from types import SimpleNamespace

    from geomprobe.options import as_dict
    from geomprobe.readers import read_manifest
    from geomprobe.rundir import model_identity

    if config.overwrite or not isinstance(config.model, str) or "@" in config.model:
        return None
    out = Path(config.out if config.out is not None else default_out(config.model))
    try:
        manifest = read_manifest(out / "manifest.json")
        source = Path(manifest["model"]["source"])
        recorded = manifest["config"]
        if manifest.get("status") != "complete" or not source.is_dir() or recorded.get("model") != config.model:
            return None
        identity = model_identity(SimpleNamespace(source=source, revision=None, commit=None, in_memory=None))
        if recorded != config.fingerprint(recorded.get("revision"), identity) or config.revision is not None:
            return None
        wanted = {key: value for key, value in as_dict(config).items() if key not in _NOT_RESULTS}
        for options in configs:
            entry = manifest["suites"].get(options.suite) or {}
            if entry.get("status") == "skipped" and skip_unsupported:
                continue
            ran = {key: value for key, value in (entry.get("run_config") or {}).items() if key not in _NOT_RESULTS}
            if entry.get("status") != "complete" or entry.get("options") != options.to_dict() or ran != wanted:
                return None
        if not _files_intact(out, configs, manifest):
            return None
    except (GeomprobeError, OSError, ValueError, KeyError, TypeError, AttributeError):
        return None  # anything unreadable: the full path decides (and says what is wrong)
    return out


def _files_intact(out: Path, configs: list, manifest: dict | None = None) -> bool:
    """Whether a finished run's files look whole, read cheaply: each suite's results.json read by its
    reader (geomprobe.readers), written by this geomprobe version and holding what it held when
    written (the sha256 in its manifest entry, where one is recorded), every extraction's meta.json and
    request.json read by theirs, every array's .npy header reads with a plain numeric dtype (the data
    are not read), and no temporary of a killed write is left. Anything else goes the full way, which
    recomputes or cleans what it finds."""
    import numpy as np
    from numpy.lib import format as npy

    from geomprobe import __version__
    from geomprobe.integrity import file_sha256
    from geomprobe.readers import read_extraction_meta, read_extraction_request, read_results

    try:
        for options in configs:
            results = out / options.suite / "results.json"
            if results.exists() and read_results(results).get("geomprobe_version") != __version__:
                return False  # written by another geomprobe: the full way rewrites it with this one
            recorded = (((manifest or {}).get("suites") or {}).get(options.suite) or {}).get("results_sha256")
            if recorded is not None and results.exists() and file_sha256(results) != recorded:
                return False  # edited since: the full way says so and computes it again
        for path in out.rglob("*"):
            if path.name.endswith(".geomprobe-tmp"):
                return False
            if path.name == "meta.json" and path.parent.name.startswith("extraction"):
                read_extraction_meta(path)
            elif path.name == "request.json" and path.parent.name.startswith("extraction"):
                read_extraction_request(path)
            elif path.suffix == ".npy" and path.is_file():
                with path.open("rb") as handle:
                    version = npy.read_magic(handle)
                    reader = npy.read_array_header_1_0 if version == (1, 0) else npy.read_array_header_2_0
                    shape, _, dtype = reader(handle)
                    data_start = handle.tell()
                if dtype.hasobject or path.stat().st_size < data_start + dtype.itemsize * int(np.prod(shape)):
                    return False
    except GeomprobeError:
        return False
    return True


class _Timing:
    """Each suite's planned estimate, to record beside its wall time when it finishes (geomprobe.timing)."""

    def __init__(self, planned):
        arch = getattr(planned, "arch", None)
        self.n_params = arch.n_params if arch is not None else None
        self.device = planned.device_info.name if planned.device_info is not None and \
            planned.device_info.kind != "cpu" else None
        self.estimates = {suite.name: suite.estimate_s[1] for suite in getattr(planned, "suites", [])
                          if not suite.skipped}

    def record(self, suite: str, seconds: float) -> None:
        if self.n_params and self.estimates.get(suite):
            from geomprobe.timing import record_suite_time

            record_suite_time(suite, self.n_params, self.estimates[suite], seconds, self.device)


def _say_complete(out: Path, configs: list, progress: bool, report: bool, details: bool) -> Path:
    """A rerun of a finished run: nothing is loaded or recomputed; the summaries print as a run's do."""
    from geomprobe.results import load_run

    names = [options.suite for options in configs]
    log.info("%s already holds %s finished with these settings: nothing to recompute (--overwrite recomputes)",
             out, ", ".join(names))
    if progress:
        from geomprobe.brief import details_hint, print_brief

        statuses = load_run(out).statuses()
        for name in names:
            if statuses.get(name) == "complete":
                if details:
                    from geomprobe.suites import get_suite

                    summary = get_suite(name).summary
                    if summary is not None:
                        summary(load_run(out).results[name])
                else:
                    print_brief(out, name)
        if not details:
            print(details_hint(out))
    if report:
        from geomprobe.report import build_report

        build_report([out], out / "report.html")
    return out


def _run_borrowed(config: RunConfig, suites, *, progress: bool, report: bool, skip_unsupported,
                  details: bool = False) -> Path:
    """run() on a model object the caller holds (geomprobe.models.borrowed): it keeps its own dtype,
    device and placement, so the options that load a model do not apply; no memory plan (the model
    is already in memory; the batch size defaults to 8). What the run changed on the model is put
    back when it ends, unless the caller passed a LoadedModel of their own (theirs to release)."""
    import dataclasses

    from geomprobe.models.borrowed import borrow
    from geomprobe.models.loading import LoadedModel
    from geomprobe.prompts import given_prompts
    from geomprobe.rundir import check_out
    from geomprobe.suites import get_suite
    from geomprobe.suites.base import limited_configs

    for name, value in (("revision", config.revision), ("quantize", config.quantize),
                        ("device_map", config.device_map)):
        if value is not None:
            raise ConfigError(f"--{name.replace('_', '-')} loads a model; a model object passed in keeps its own "
                              "weights and placement: drop it")
    ours = not isinstance(config.model, LoadedModel)
    loaded = borrow(config.model)
    try:
        if config.dtype not in ("float32", loaded.dtype):
            raise ConfigError(f"--dtype {config.dtype}: the model passed in holds {loaded.dtype} weights; convert it "
                              "(model.to(dtype)) or leave dtype at its default")
        if config.backend == "tl" and loaded.bridge is None:
            raise ConfigError("the tl backend boots TransformerLens on a copy loaded from disk, which an in-memory "
                              "model does not have: pass a TransformerBridge, or use the hf backend")
        config = dataclasses.replace(config, model=loaded.spec, dtype=loaded.dtype, device=loaded.device,
                                     batch_size=config.batch_size or 8)
        config, batch_record = resolve_auto_batch(config, loaded, None)
        configs = limited_configs(suite_configs(suites), config)
        specs = [(get_suite(options.suite), options) for options in configs]
        if skip_unsupported is None:
            skip_unsupported = isinstance(suites, str) and "all" in [s.strip() for s in suites.split(",")]
        prompts = given_prompts(config.prompts)
        out = check_out(config.out if config.out is not None else default_out(config.model),
                        overwrite=config.overwrite)
        seed_everything(config.seed)
        return _run_loaded(config, loaded, out, specs, skip_unsupported, prompts, progress, report, details,
                           batch_record=batch_record)
    finally:
        if ours:
            loaded.release()


def _run_loaded(config: RunConfig, loaded, out: Path, specs, skip_unsupported: bool, prompts, progress: bool,
                report: bool, details: bool = False, timing: _Timing | None = None, batch_record: dict | None = None) -> Path:
    """The run on a loaded model: check layers and pairings, then run each suite under the lock, every
    write confined to the run directory and geomprobe's cache (geomprobe.rundir.confined)."""
    from geomprobe.paths import cache_dir
    from geomprobe.rundir import RunDirectory, check_out, confined

    check_out(out, loaded.source, overwrite=config.overwrite)
    _check_layers(config, loaded.adapter)
    skipped = _pairing(specs, loaded, config, skip_unsupported)
    for spec, options in specs:
        if spec.name not in skipped:
            try:
                spec.precheck(loaded, config, options)
            except GeomprobeError as error:
                raise type(error)(f"{spec.name} suite: {error}") from error
    run_dir = RunDirectory(out)
    running = [spec.name for spec, _ in specs if spec.name not in skipped]
    # every write lands inside the run (or the cache); a changed results.json is said once, by its suite
    with run_dir.lock(), confined(run_dir.path, cache_dir()), _said_once(run_dir, running):
        _run_locked(run_dir, config, loaded, specs, skipped, prompts, progress, details, timing, batch_record)
        if progress and not details and any(spec.name not in skipped for spec, _ in specs):
            from geomprobe.brief import details_hint

            print(details_hint(run_dir.path))
        if report:
            from geomprobe.report import build_report

            build_report([run_dir.path], run_dir.path / "report.html")
    return _tracked(run_dir.path, config, quiet=not progress)


@contextlib.contextmanager
def _said_once(run_dir, names: list[str]):
    """While the run computes these suites again, its own reads of the directory before a suite
    starts (run.json, the brief after each suite) leave unsaid that the suite's results.json changed
    since it was written: _say_damaged_results says it once, as the suite starts."""
    import warnings

    from geomprobe.integrity import SHOWN_AS_EDITED

    with warnings.catch_warnings():
        for name in names:
            path = run_dir.path / name / "results.json"
            warnings.filterwarnings("ignore", message=f"{re.escape(str(path))} changed since .*"
                                                      f"{re.escape(SHOWN_AS_EDITED)}")
        yield


def _say_damaged_results(run_dir, name: str, manifest: dict) -> None:
    """One warning line when a suite the manifest marks complete has a results.json its reader
    refuses (truncated, not JSON, not its schema), none, or one that no longer holds what the suite
    wrote (its sha256 differs from the manifest's results_sha256): the suite is run again and writes
    it whole."""
    import warnings

    from geomprobe.integrity import changed_line, file_sha256
    from geomprobe.readers import RESULTS, read_results

    path = run_dir.path / name / "results.json"
    entry = (manifest.get("suites") or {}).get(name) or {}
    if entry.get("status") != "complete":
        return
    if not path.exists() and not path.is_symlink():
        warnings.warn(f"{path} is missing though the manifest marks {name} complete: computing it again", stacklevel=2)
        return
    try:
        read_results(path)
    except GeomprobeError as error:
        damage = str(error).removesuffix(f": {RESULTS.fix}")
        warnings.warn(f"{damage}: computing it again", stacklevel=2)
        return
    if entry.get("results_sha256") is not None and file_sha256(path) != entry["results_sha256"]:
        warnings.warn(changed_line(path, "manifest.json", "computing it again"), stacklevel=2)


def _tracked(path: Path, config: RunConfig, quiet: bool = False) -> Path:
    """With --wandb, the finished run logged to Weights & Biases (geomprobe.tracking). A failure there
    leaves the run as it is: one warning line, and the manifest says what failed."""
    if not config.wandb:
        return path
    from geomprobe.tracking import log_run

    try:
        logged = log_run(path, config.wandb, quiet=quiet)
    except Exception as error:  # noqa: BLE001 - the network, a key, W&B itself: the results stay on disk
        text = str(error).splitlines()[0] if str(error) else type(error).__name__
        log.warning("wandb: the run was not logged (%s: %s); it is complete in %s: `wandb login` or "
                    "WANDB_MODE=offline, then rerun the same command", type(error).__name__, text, path)
        return path
    log.info("wandb: logged to %s", logged["url"] or f"{logged['dir']} (offline: `wandb sync` sends it)")
    return path


def _run_locked(run_dir, config: RunConfig, loaded, specs, skipped: dict, prompts, progress: bool,
                details: bool = False, timing: _Timing | None = None, batch_record: dict | None = None) -> None:
    """Open the run directory (its lock held) and run each suite, recording its status."""
    from geomprobe.options import as_dict
    from geomprobe.plan import recommended_batch
    from geomprobe.prompts import prompts_label
    from geomprobe.results import write_run_document
    from geomprobe.rundir import model_identity, now
    from geomprobe.suites import SUITES, SuiteContext

    running = {spec.name: options.to_dict() for spec, options in specs if spec.name not in skipped}
    recorded = as_dict(config)  # prompts given in Python: their count and hash (each suite saves its prompts)
    if recorded["prompts"] is not None:
        recorded["prompts"] = prompts_label(config.prompts)
    for name in [*running, "extraction"]:  # where the suites write: real folders of the run, never links out of it
        run_dir.own_folder(name, overwrite=config.overwrite)
    manifest = run_dir.open(config.fingerprint(loaded.revision, model_identity(loaded)), overwrite=config.overwrite,
                            suites=running, registered=set(SUITES),
                            extra={"model": loaded.describe(), "backend": config.backend, "dtype": config.dtype,
                                   "seed": config.seed, **({"batch_size_auto": batch_record} if batch_record else {})})
    for spec, options in specs:
        if spec.name in skipped:
            manifest = run_dir.read_manifest()
            manifest["suites"][spec.name] = {"status": "skipped", "why": skipped[spec.name]}
            run_dir.write_manifest(manifest)
            log.info("%s suite skipped: %s", spec.name, skipped[spec.name])
            continue
        manifest = run_dir.read_manifest()
        fresh = spec.name not in (manifest.get("suites") or {})  # nothing of it kept from before: a whole run
        _say_damaged_results(run_dir, spec.name, manifest)
        manifest["suites"][spec.name] = {"status": "running", "started": now(), "run_config": recorded,
                                         "options": options.to_dict()}
        run_dir.write_manifest(manifest)
        ctx = SuiteContext(loaded=loaded, run=config, options=options, run_dir=run_dir, prompts=prompts,
                           progress=progress, details=details, batch_planner=recommended_batch)
        log.debug("%s suite: started in %s with %s", spec.name, run_dir.path, options.to_dict())
        started = time.monotonic()
        try:
            spec.run(ctx)
        except BaseException as error:
            interrupted = isinstance(error, KeyboardInterrupt)
            status = "interrupted" if interrupted else "failed"
            text = str(error).splitlines()[0] if str(error) else type(error).__name__
            manifest = run_dir.read_manifest()
            manifest["suites"][spec.name].update(status=status, ended=now(), error=text)
            manifest.update(status=status, ended=now())
            run_dir.write_manifest(manifest)
            write_run_document(run_dir.path)
            if interrupted:
                raise KeyboardInterrupt(f"the {spec.name} suite was interrupted; {run_dir.path} keeps the finished "
                                        "work: rerun the same command to resume") from None
            if isinstance(error, GeomprobeError) and not str(error).startswith(f"{spec.name} suite"):
                raise type(error)(f"{spec.name} suite: {error}") from error
            if not isinstance(error, GeomprobeError) and isinstance(error, Exception):
                log.error("%s suite failed (%s: %s); %s/manifest.json marks it failed", spec.name,
                          type(error).__name__, text, run_dir.path)
            raise
        log.debug("%s suite: complete in %.1f s", spec.name, time.monotonic() - started)
        if fresh and timing is not None:
            timing.record(spec.name, time.monotonic() - started)
        manifest = run_dir.read_manifest()
        manifest["suites"][spec.name].update(status="complete", ended=now(), **ctx.used)
        run_dir.write_manifest(manifest)
        write_run_document(run_dir.path)
        if progress and not details:
            from geomprobe.brief import print_brief

            print_brief(run_dir.path, spec.name)
    manifest = run_dir.read_manifest()
    manifest.update(status="complete", ended=now())
    run_dir.write_manifest(manifest)
    write_run_document(run_dir.path)
