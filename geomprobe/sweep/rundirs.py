"""The truth of a sweep: each job's state (done, running, failed, pending, or damaged where its
manifest cannot be read) read from its own run directory, which only the job writes; the sweep's
record is asked only where the run directory has nothing to say."""

from __future__ import annotations

from pathlib import Path

from .job import read_result
from .settings import LOGS


def _read_manifest(run_dir: Path) -> dict | None:
    """The job's manifest (geomprobe.readers.read_manifest), or None when it is missing or unreadable."""
    return read_job_manifest(run_dir)[0]


def read_job_manifest(run_dir: Path) -> tuple[dict | None, str | None]:
    """(the job's manifest, None); (None, None) when it has none yet; (None, why) when its reader
    refuses it (truncated, not JSON, a FIFO, a folder, ...): the reader's line, ending with what to do."""
    from geomprobe.errors import GeomprobeError
    from geomprobe.readers import read_manifest

    path = run_dir / "manifest.json"
    if not path.exists() and not path.is_symlink():
        return None, None
    try:
        return read_manifest(path, f"remove {run_dir} and rerun the sweep to run that job again"), None
    except GeomprobeError as error:
        return None, str(error)


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
    """(done | running | failed | pending | damaged, detail) of a job, from its run directory (and
    the sweep's record where the run directory has nothing to say); damaged: its manifest.json
    cannot be read, the detail saying why."""
    from geomprobe.locks import is_locked

    run_dir = out / job["run_dir"]
    holder = is_locked(run_dir)
    if holder is not None:
        return "running", holder
    manifest, damage = read_job_manifest(run_dir)
    if damage is not None:
        return "damaged", damage
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
