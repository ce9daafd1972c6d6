"""The slurm executor through submitit: its parameters, the sbatch script of an array (for --dry-run),
the submission of one array, and what squeue says of the submitted jobs."""

from __future__ import annotations

import shutil

from geomprobe.errors import ConfigError

from .job import _payload, one_line, run_job
from .record import Record
from .settings import LOGS, ExecutorOptions, Sweep


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
