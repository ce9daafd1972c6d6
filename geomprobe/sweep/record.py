"""sweep.json, the sweep's own record: written by the driver under the sweep directory's lock (Record),
read by --status (_read_sweep); apart from the driver so that the status table, which the driver prints
at its end, reads it from below."""

from __future__ import annotations

import sys
from pathlib import Path

from geomprobe.errors import ConfigError, GeomprobeError

from .settings import SWEEP_FILE

FORMAT = 1


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
    """sweep.json of a sweep directory, read by geomprobe.readers.read_sweep_record (bounded, every job
    checked, each job's run directory below the sweep's); one line naming the fix otherwise."""
    from geomprobe.readers import read_sweep_record

    path = Path(out) / SWEEP_FILE
    if not path.exists() and not path.is_symlink():
        raise ConfigError(f"{out} has no {SWEEP_FILE}: not a sweep directory (geomprobe sweep --out {out} ...)")
    return read_sweep_record(path)
