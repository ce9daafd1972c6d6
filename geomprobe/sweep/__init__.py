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

The parts: settings (what they all share: ExecutorOptions, Sweep), revisions (what --revisions names),
models (the jobs' (model, revision) pairs and run names), sources (the hub pre-check), spec (build_sweep,
read_sweep_file), job (run_job, in the executor's process), rundirs (each job's state), record
(sweep.json), driver (run_sweep), slurm, status (--status), cli (`geomprobe sweep`'s options and body).
"""

from .cli import EXECUTOR_PANEL, SWEEP_PANEL, SweepClickCommand, SweepCommand, sweep_from_cli
from .driver import LOCAL_TIMEOUT_MIN, POLL_S, _local_slots, refuse_before_jobs, run_sweep
from .job import one_line, read_result, result_path, run_job
from .models import _model_revisions, run_names
from .record import FORMAT, Record
from .revisions import PYTHIA_STEPS, log_spaced, model_revisions
from .rundirs import job_done, job_state
from .settings import EXECUTOR_FIELDS, LOGS, PER_JOB, RUNS, SWEEP_FILE, ExecutorOptions, Sweep
from .slurm import slurm_parameters, slurm_script
from .sources import source_problems
from .spec import RUN_IDENTITY, build_sweep, read_sweep_file
from .status import STATES, print_status, status_json, status_rows

__all__ = [
    "EXECUTOR_FIELDS", "EXECUTOR_PANEL", "FORMAT", "LOCAL_TIMEOUT_MIN", "LOGS", "PER_JOB", "POLL_S", "PYTHIA_STEPS",
    "RUNS", "RUN_IDENTITY", "STATES", "SWEEP_FILE", "SWEEP_PANEL", "ExecutorOptions", "Record", "Sweep",
    "SweepClickCommand", "SweepCommand", "_local_slots", "_model_revisions", "build_sweep", "job_done", "job_state",
    "log_spaced", "model_revisions", "one_line", "print_status", "refuse_before_jobs", "read_result", "read_sweep_file",
    "result_path", "run_job", "run_names", "run_sweep", "slurm_parameters", "slurm_script", "source_problems",
    "status_json", "status_rows", "sweep_from_cli",
]
