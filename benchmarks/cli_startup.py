"""How long the command line takes before it does anything: a refused sweep and `--help`, against a
bare Python start measured in the same run.

    .venv/bin/python benchmarks/cli_startup.py            # 5 rounds, ~20 s
    .venv/bin/python benchmarks/cli_startup.py --rounds 9

The refused sweep is `geomprobe sweep --models pythia-160m --revisions step0,step1000 --suites sula`
with an empty HF_HOME and HF_HUB_OFFLINE=1: every revision is checked before anything is submitted,
and the command exits 2 with one line. The commands take turns within a round; the median wall
seconds of each, and its ratio to the bare start (`python -c pass`), are printed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "HF_HOME": os.path.join(tmp, "hf"), "HF_HUB_OFFLINE": "1"}
        commands = {
            "python -c pass": ([sys.executable, "-c", "pass"], 0),
            "geomprobe --help": ([sys.executable, "-m", "geomprobe", "--help"], 0),
            "refused sweep": ([sys.executable, "-m", "geomprobe", "sweep", "--models", "pythia-160m", "--revisions",
                               "step0,step1000", "--suites", "sula", "--out", os.path.join(tmp, "sweep")], 2),
        }
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.rounds):
            for name, (command, code) in commands.items():
                start = time.perf_counter()
                done = subprocess.run(command, env=env, cwd=tmp, capture_output=True, text=True)
                times[name].append(time.perf_counter() - start)
                if done.returncode != code:
                    raise SystemExit(f"{name}: exit {done.returncode}, expected {code}: {done.stderr[-500:]}")
    base = statistics.median(times["python -c pass"])
    print(f"{'command':20} {'median s':>9} {'/ bare python':>14}   (load {os.getloadavg()[0]:.1f}, {args.rounds} rounds)")
    for name, values in times.items():
        print(f"{name:20} {statistics.median(values):9.3f} {statistics.median(values) / base:14.1f}")


if __name__ == "__main__":
    main()
