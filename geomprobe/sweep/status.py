"""`geomprobe sweep --status DIR`: one row per job with its state read from its run directory, and the
totals, as a table or as JSON."""

from __future__ import annotations

from pathlib import Path

from .record import _read_sweep
from .rundirs import _read_manifest, job_state
from .slurm import _slurm_queue


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


STATES = ("done", "running", "failed", "pending", "damaged")  # damaged: the job's manifest.json cannot be read


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
    colours = {"done": "green", "running": "cyan", "failed": "red", "pending": "yellow", "damaged": "magenta"}
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
