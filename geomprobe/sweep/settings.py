"""What every part of a sweep shares: the names of the sweep directory's file and folders, the
RunConfig fields set per job, how the jobs run (ExecutorOptions) and the validated Sweep; apart so that
each part imports them from below."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Literal

from geomprobe.options import option, validate

SWEEP_FILE = "sweep.json"
LOGS = "logs"
RUNS = "runs"
# RunConfig fields the sweep sets per job (--models, --revisions, --out name the sweep's own)
PER_JOB = ("model", "revision", "out")


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
