"""Recorded outputs of fixed runs: what a restructuring must leave unchanged.

RUNS are small runs of every suite but domain (whose corpora take minutes) on tiny-neox (their
copies in the legacy build and the geometry sample by entropy, the defaults when they were
recorded, named explicitly since the defaults changed). Their
results.json files, written by `python tests/recorded.py` (run it only when a change of numbers is
intended, and say so in the commit, or to add a CPU model's recording from unchanged code), live
in tests/data/recorded/<run>/<cpu model>-<kernels>/<suite>.json with the torch build, CPU kernels and CPU
model that made them (the first recording, made before the CPU model was recorded, in
tests/data/recorded/<run>/); tests/project/test_recorded_outputs.py reruns each and compares.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

RECORDED = Path(__file__).resolve().parent / "data" / "recorded"

RUNS: dict[str, list[str]] = {
    "own-prompts": ["--model", "tiny-neox", "--suite", "extract,geometry,mechanisms", "--prompts", "{demo}",
                    "--n-per-quintile", "4", "--sample", "entropy", "--null", "init-legacy:1", "--n-boot", "20"],
    "sula-prompts": ["--model", "tiny-neox", "--suite", "sula,ablation", "--n-per-k", "3", "--n-random", "2",
                     "--null", "init-legacy:1", "--n-boot", "20"],
}


def canonical(results: dict) -> str:
    """results.json as compared: every key and number as written, the package version left out
    (it changes with every release, the numbers must not) and the demo prompts' path as {demo}."""
    from geomprobe.models.builtin import demo_prompts_path

    text = json.dumps({k: v for k, v in results.items() if k != "geomprobe_version"}, indent=1, sort_keys=True)
    return text.replace(json.dumps(str(demo_prompts_path()))[1:-1], "{demo}")


def command(name: str, out: Path) -> list[str]:
    from geomprobe.models.builtin import demo_prompts_path

    return ["run", *[a.replace("{demo}", str(demo_prompts_path())) for a in RUNS[name]], "--out", str(out),
            "--quiet"]


def run(name: str, out: Path) -> dict[str, dict]:
    """Run RUNS[name] into `out` in this process; suite -> its results.json."""
    from typer.testing import CliRunner

    from geomprobe.cli import app

    result = CliRunner().invoke(app, command(name, out))
    if result.exit_code != 0:
        raise RuntimeError(f"recorded run {name} failed: {result.output}")
    suites = RUNS[name][RUNS[name].index("--suite") + 1].split(",")
    return {suite: json.loads((out / suite / "results.json").read_text()) for suite in suites}


def cpu_folder(name: str) -> Path:
    """Where this machine's CPU model and kernel set keep their recording of run `name`: the model
    alone is not enough (a virtual machine's "AMD EPYC" runs AVX2 on one host, AVX512 on another)."""
    from geomprobe.windtunnel.reference import made_with_here

    here = made_with_here()
    return RECORDED / name / re.sub(r"[^A-Za-z0-9]+", "-", f"{here['cpu']} {here['cpu_capability']}").strip("-")


def recording_for_here(name: str) -> Path:
    """This CPU model's recording of run `name` where there is one, else the first recording."""
    folder = cpu_folder(name)
    return folder if (folder / "made_with.json").exists() else RECORDED / name


def record() -> None:
    import tempfile

    from geomprobe.windtunnel.reference import made_with_here

    for name in RUNS:
        with tempfile.TemporaryDirectory() as tmp:
            outputs = run(name, Path(tmp) / name)
        folder = cpu_folder(name)
        folder.mkdir(parents=True, exist_ok=True)
        for suite, results in outputs.items():
            (folder / f"{suite}.json").write_text(canonical(results) + "\n")
        (folder / "made_with.json").write_text(json.dumps({**made_with_here(), "command": RUNS[name]}, indent=1) + "\n")
        print(f"{name}: {', '.join(outputs)} -> {folder}")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    record()
