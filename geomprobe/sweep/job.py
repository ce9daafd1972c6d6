"""One sweep job as it runs in the executor's process (run_job), what it is given (its payload), and
the JSON result it leaves for the sweep to read (read_result; never submitit's pickles, which would run
code when unpickled)."""

from __future__ import annotations

import os
import re
import sys
import time
import traceback
from pathlib import Path

from geomprobe.errors import GeomprobeError

from .settings import LOGS


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
    from geomprobe.readers import read_job_result

    path = result_path(out, token)
    if not path.exists() and not path.is_symlink():
        return None
    try:
        value = read_job_result(path)
    except GeomprobeError as error:  # bounded, checked against schemas.JobResult: never a pickle
        return {"status": "failed", "error": one_line(error)}
    error = value.get("error")
    return {**value, "error": None if error is None else one_line(str(error))}
