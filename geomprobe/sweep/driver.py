"""The driver: refuses what can be refused before any job starts (refuse_before_jobs), then runs the jobs that
are not done, in this process or through submitit's local executor (a job per GPU slot), or submits them
to slurm (run_sweep)."""

from __future__ import annotations

import os
import re
import shutil
import sys
import time
from pathlib import Path

from geomprobe.errors import ConfigError

from .job import _payload, read_result, run_job
from .record import Record
from .rundirs import _conflict, _read_manifest, job_done
from .settings import LOGS, RUNS, SWEEP_FILE, Sweep
from .slurm import _slurm_executor, _slurm_queue, _submit_slurm
from .status import print_status

POLL_S = 0.25  # how often the local driver looks at its running jobs
LOCAL_TIMEOUT_MIN = 7 * 24 * 60  # the local executor's per-job limit unless --time is given


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


def refuse_before_jobs(sweep: Sweep) -> None:
    """What can be refused before any job starts: the sweep directory, a folder of it (runs/, logs/,
    a job's run directory) that is a symbolic link, and run directories that hold another
    configuration (unless --overwrite)."""
    from geomprobe.rundir import own_folder

    _check_out(sweep.out)
    for folder in (RUNS, LOGS, *(job["run_dir"] for job in sweep.jobs)):  # submitit writes logs/ itself
        own_folder(sweep.out / folder, owner="sweep", replaceable=False)
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
    from geomprobe.locks import DirectoryLock
    from geomprobe.paths import cache_dir
    from geomprobe.rundir import confined

    refuse_before_jobs(sweep)
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
        with confined(sweep.out, cache_dir()):  # the driver's writes (sweep.json, inline jobs' runs) stay in the sweep
            _run_jobs(sweep, record=Record(sweep.out, sweep.spec, sweep.jobs), executor=executor, plan=plan,
                      slurm=slurm, say=say, on_inline=on_inline)
    finally:
        lock.release()
    if not quiet:
        print_status(sweep.out)
    if executor.executor == "slurm":
        return 0
    return 1 if any(job["status"] == "failed" for job in sweep.jobs) else 0


def _run_jobs(sweep: Sweep, record: Record, executor, plan, slurm, say, on_inline) -> None:
    """run_sweep under the sweep directory's lock: each job's state, then the jobs not done."""
    from geomprobe.locks import is_locked
    from geomprobe.rundir import now

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
