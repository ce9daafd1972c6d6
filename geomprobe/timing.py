"""What this machine has measured about its own speed, kept in the geomprobe cache so that
`geomprobe plan` reads a calibration instead of guessing from a momentary benchmark.

Two records, both keyed by the machine (CPU model and vector kernels, torch build, thread count,
GPU name where the plan is for a GPU):

- machine.json: the CPU's sustained float matmul rate and copy bandwidth, measured once (about a
  second) the first time a plan needs them and read from then on, with the date; `geomprobe plan
  --recalibrate` measures again (after a hardware change, or on an idle machine when the first
  measurement ran under load).
- timings.jsonl: one line per finished suite of every run: the plan's own estimate for that suite
  (its upper bound: compute, weight reads and per-call overhead, before calibration) and the wall
  time it took. The plan of a suite is then that suite's median ratio measured / estimated over
  its last runs here on models within 10x the size, times today's estimate: small models are
  dominated by per-call and analysis costs the FLOP count does not see, and this is where they
  are measured. With no such run yet the plan says it is uncalibrated.
"""

from __future__ import annotations

import json
import statistics
import time
from datetime import datetime, timezone
from pathlib import Path

MAX_RUNS = 10  # the last runs of a suite a calibration reads
SIZE_FACTOR = 10.0  # runs of models within this factor of the planned size
SPREAD = 1.5  # the calibrated range: estimate / SPREAD to estimate x SPREAD


def _cache() -> Path:
    from geomprobe.paths import cache_dir

    return cache_dir()


def machine_key(device_name: str | None = None) -> str:
    """'Intel(R) Xeon(R) Processor AVX512 torch 2.13.0+cpu 2 threads' (a GPU plan: its name first)."""
    import torch

    from geomprobe.windtunnel.reference import made_with_here

    here = made_with_here()
    key = f"{here['cpu']} {here['cpu_capability']} torch {here['torch']} {torch.get_num_threads()} threads"
    return f"{device_name}; {key}" if device_name else key


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _read_json(path: Path) -> dict:
    from geomprobe.errors import GeomprobeError
    from geomprobe.readers import read_data

    try:
        data = read_data(path)
    except GeomprobeError:  # missing or damaged: measured again
        return {}
    return data if isinstance(data, dict) else {}


def measure_cpu(dtype: str = "float32", seconds: float = 1.0) -> tuple[float, float]:
    """(matmul FLOP/s in `dtype`, copy bandwidth bytes/s): repeated 1024 x 1024 matmuls for about
    `seconds` (the best of five slices, so a moment of load elsewhere counts less), and a 32 MB copy."""
    import torch

    torch_dtype = getattr(torch, dtype)
    n = 1024
    a, b = torch.randn(n, n).to(torch_dtype), torch.randn(n, n).to(torch_dtype)
    torch.mm(a, b)
    best = 0.0
    for _ in range(5):
        reps, start = 0, time.perf_counter()
        while reps < 2 or time.perf_counter() - start < seconds / 5:
            torch.mm(a, b)
            reps += 1
        best = max(best, 2 * n**3 * reps / max(time.perf_counter() - start, 1e-9))
    x = torch.empty(8 * 2**20, dtype=torch.float32)
    y = torch.empty_like(x)
    y.copy_(x)
    reps, start = 0, time.perf_counter()
    while reps < 4 or time.perf_counter() - start < 0.1:
        y.copy_(x)
        reps += 1
    return best, 2 * x.numel() * 4 * reps / max(time.perf_counter() - start, 1e-9)


def cpu_rates(dtype: str = "float32", recalibrate: bool = False) -> dict:
    """{"flops", "bandwidth", "measured" (date), "key"}: this machine's recorded CPU rates, measured
    and recorded now when there is no record (or recalibrate)."""
    key = machine_key()
    path = _cache() / "machine.json"
    data = _read_json(path)
    entry = (data.get(key) or {}).get(dtype)
    if entry and not recalibrate and {"flops", "bandwidth", "measured"} <= set(entry):
        return {**entry, "key": key, "new": False}
    flops, bandwidth = measure_cpu(dtype)
    entry = {"flops": flops, "bandwidth": bandwidth, "measured": _now()}
    data.setdefault(key, {})[dtype] = entry
    try:
        from geomprobe.errors import GeomprobeError
        from geomprobe.rundir import atomic_write_json

        atomic_write_json(path, data)
    except (OSError, GeomprobeError):  # a read-only cache: use the measurement, keep nothing
        pass
    return {**entry, "key": key, "new": True}


def record_suite_time(suite: str, n_params: int, estimate_s: float, measured_s: float,
                      device_name: str | None = None) -> None:
    """Append one finished suite's estimate and wall time to timings.jsonl (never raises)."""
    if not (estimate_s > 0 and measured_s > 0):
        return
    line = {"date": _now(), "machine": machine_key(device_name), "suite": suite, "n_params": int(n_params),
            "estimate_s": float(estimate_s), "measured_s": float(measured_s)}
    try:
        path = _cache() / "timings.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a") as handle:  # one short line per write: appends do not interleave
            handle.write(json.dumps(line) + "\n")
    except OSError:
        pass


def calibration(suite: str, n_params: int, device_name: str | None = None) -> dict | None:
    """{"ratio", "n_runs", "last"} for a suite on models of about this size here, None without runs."""
    from geomprobe.errors import GeomprobeError
    from geomprobe.files import decode, loads, read_bytes
    from geomprobe.readers import DATA

    path = _cache() / "timings.jsonl"
    try:
        lines = decode(read_bytes(path, DATA), path, DATA).splitlines()
    except GeomprobeError:
        return None
    key, ratios, last = machine_key(device_name), [], None
    for text in lines:
        try:
            row = loads(text, path, DATA)
            if row["machine"] != key or row["suite"] != suite:
                continue
            size = max(int(row["n_params"]), 1)
            if not (1 / SIZE_FACTOR <= max(n_params, 1) / size <= SIZE_FACTOR):
                continue
            ratios.append(float(row["measured_s"]) / float(row["estimate_s"]))
            last = row["date"]
        except (GeomprobeError, ValueError, KeyError, TypeError, ZeroDivisionError):
            continue  # a damaged line is skipped, never fatal
    ratios = ratios[-MAX_RUNS:]
    if not ratios:
        return None
    return {"ratio": statistics.median(ratios), "n_runs": len(ratios), "last": last}
