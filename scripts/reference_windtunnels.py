"""Train the reference wind tunnels and ship them: what `windtunnel-TASK` loads on every machine.

    .venv/bin/python scripts/reference_windtunnels.py --train sula bijection   # resumable, in sessions
    .venv/bin/python scripts/reference_windtunnels.py --train hmm --until 4000  # stop there, state saved
    .venv/bin/python scripts/reference_windtunnels.py --ship sula bijection     # copy into the package

--train runs each task's built-in recipe (geomprobe.windtunnel.builtin.RECIPES, at one thread)
into runs/reference/TASK (a rerun resumes it, bit for bit). --ship copies a finished run's model,
tokenizer and metrics (with its training curve, versions and timing) into
geomprobe/data/windtunnels/TASK, trains the recipe's first FIRST_STEPS steps again in a temporary
directory to record the SHA-256 of its weights there, and rewrites the SHIPPED table of
geomprobe/windtunnel/reference.py with every file's SHA-256. Run it with
GEOMPROBE_WINDTUNNEL_STEPS unset (the recipes' real budgets).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

FIRST_STEPS = 16
CHECKPOINTS_SHIPPED = ("sula", "recall")  # small enough to ship the training checkpoints (the @step-N revisions)


def run_dir(task: str) -> Path:
    return ROOT / "runs" / "reference" / task


def train_reference(task: str, until: int | None) -> dict:
    from geomprobe.windtunnel.builtin import recipe
    from geomprobe.windtunnel.train import train

    return train(recipe(task), run_dir(task), progress=sys.stderr.isatty(), resume=True,
                 recipe=f"windtunnel-{task}'s recipe", until=until)


def first_steps_sha256(task: str, steps: int = FIRST_STEPS) -> str:
    """SHA-256 of the weights after the recipe's first `steps` steps, trained here at one thread."""
    import torch

    from geomprobe.windtunnel.builtin import recipe
    from geomprobe.windtunnel.reference import weights_sha256
    from geomprobe.windtunnel.train import load_state, train

    with tempfile.TemporaryDirectory() as tmp:
        train(recipe(task), Path(tmp) / task, progress=False, until=steps)
        state = load_state(Path(tmp) / task)
        torch.set_num_threads(os.cpu_count() or 1)
        return weights_sha256(state["model"])


def check_first_checkpoint(source: Path, task: str) -> None:
    """The run's earliest checkpoint must equal the recipe's first steps trained again here: the
    shipped weights were made by this trainer, this recipe and one thread."""
    import torch

    from geomprobe.windtunnel.checkpoints import checkpoint_paths
    from geomprobe.windtunnel.reference import weights_sha256

    first = checkpoint_paths(source)[0]
    step = int(first.stem.split("-", 1)[1])
    if weights_sha256(torch.load(first, map_location="cpu", weights_only=True)["state_dict"]) != \
            first_steps_sha256(task, step):
        raise SystemExit(f"{first} differs from the recipe's first {step} steps trained again here: the run was not "
                         "made by this trainer at one thread; retrain it (--train)")
    print(f"{task}: the run's checkpoint at step {step} equals the recipe retrained to it, bit for bit", flush=True)


def ship(task: str) -> dict:
    from geomprobe.windtunnel.builtin import recipe_key
    from geomprobe.windtunnel.reference import SHIPPED_FILES, file_sha256, shipped_dir

    source = run_dir(task)
    metrics = json.loads((source / "metrics.json").read_text())
    config = metrics["config"]
    from dataclasses import asdict

    from geomprobe.windtunnel.builtin import recipe

    if config != json.loads(json.dumps(asdict(recipe(task)))):
        raise SystemExit(f"{source} was not trained by windtunnel-{task}'s current recipe: retrain it (--train)")
    target = shipped_dir(task)
    if target.exists():
        shutil.rmtree(target)
    (target / "checkpoints").mkdir(parents=True) if task in CHECKPOINTS_SHIPPED else target.mkdir(parents=True)
    names = [name for name in SHIPPED_FILES if (source / name).exists()]
    if task in CHECKPOINTS_SHIPPED:
        names += [f"checkpoints/{p.name}" for p in sorted((source / "checkpoints").glob("step-*.pt"))]
    for name in names:
        shutil.copyfile(source / name, target / name)
    scores = {length: {key: value[key] for key in ("entropy_mae_bits", "kl_bits", "mass_on_feasible", "accuracy")
                       if key in value}
              for length, value in metrics["eval"].items()}
    check_first_checkpoint(source, task)
    first = first_steps_sha256(task)
    return {"task": task, "recipe": recipe_key(task), "files": {name: file_sha256(target / name) for name in names},
            "first_steps": (FIRST_STEPS, first), "scores": scores,
            "steps": metrics["steps"], "train_seconds": metrics["train_seconds"]}


def write_registry(entries: list[dict], elsewhere: dict | None = None) -> None:
    """Rewrite SHIPPED with the fresh entries (tunnels shipped from this machine, which must compute
    as MADE_WITH's) and, in `elsewhere` (task -> digest), this CPU model's first-steps digests."""
    from geomprobe.windtunnel.reference import MADE_WITH, SHIPPED, cpu_model, made_with_here, same_kernels

    other_cpu = any(cpu_model() in entry.first_steps_on for entry in SHIPPED.values())
    if entries and (not same_kernels(MADE_WITH) or other_cpu):
        raise SystemExit(f"the shipped tunnels were made with {MADE_WITH}, this machine has {made_with_here()}: "
                         "retrain all of them here and update MADE_WITH, so that every entry is reproducible")

    path = ROOT / "geomprobe" / "windtunnel" / "reference.py"
    kept = {task: entry for task, entry in SHIPPED.items()}
    lines = ["# BEGIN SHIPPED (written by scripts/reference_windtunnels.py; do not edit by hand)",
             "SHIPPED: dict[str, ShippedTunnel] = {"]
    fresh = {entry["task"]: entry for entry in entries}
    for task in sorted(set(kept) | set(fresh)):
        if task in fresh:
            e = fresh[task]
            files, first, scores = e["files"], tuple(e["first_steps"]), e["scores"]
            recipe = e["recipe"]
        else:
            old = kept[task]
            files, first, scores, recipe = old.files, old.first_steps, old.scores, old.recipe
        lines.append(f"    {task!r}: ShippedTunnel(")
        lines.append(f"        task={task!r}, recipe={recipe!r},")
        lines.append("        files={")
        lines += [f"            {name!r}: {digest!r}," for name, digest in files.items()]
        lines.append("        },")
        lines.append(f"        first_steps=({first[0]}, {first[1]!r}),")
        on = dict(kept[task].first_steps_on) if task in kept else {}
        if elsewhere and task in elsewhere:
            on[cpu_model()] = elsewhere[task]
        if on:
            lines.append(f"        first_steps_on={on!r},")
        lines.append(f"        scores={json.dumps(scores, sort_keys=True)},")
        lines.append("    ),")
    lines += ["}", "# END SHIPPED"]
    text = path.read_text()
    text = re.sub(r"# BEGIN SHIPPED.*# END SHIPPED\n?", lambda _: "\n".join(lines) + "\n", text, flags=re.S)
    path.write_text(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--train", nargs="*", default=[], help="tasks to train (resumes runs/reference/TASK)")
    parser.add_argument("--until", type=int, default=None, help="stop training at this step (state saved)")
    parser.add_argument("--ship", nargs="*", default=[], help="finished tasks to copy into the package")
    parser.add_argument("--digests-here", nargs="*", default=[],
                        help="shipped tasks whose first-steps digest to measure on this CPU model (first_steps_on), "
                             "for a machine that rounds otherwise")
    args = parser.parse_args()
    if os.environ.get("GEOMPROBE_WINDTUNNEL_STEPS"):
        raise SystemExit("unset GEOMPROBE_WINDTUNNEL_STEPS: the reference tunnels use the recipes' budgets")
    import logging

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    for task in args.train:
        result = train_reference(task, args.until)
        score = result.get("eval", {}).get("train_length")
        print(task, f"step {result['steps']}", "" if score is None else
              f"entropy MAE {score['entropy_mae_bits']:.4f} bits, KL {score['kl_bits']:.4f} bits", flush=True)
    if args.digests_here:
        from geomprobe.windtunnel.reference import SHIPPED

        write_registry([], {task: first_steps_sha256(task, SHIPPED[task].first_steps[0]) for task in args.digests_here})
    if args.ship:
        entries = [ship(task) for task in args.ship]
        write_registry(entries)
        for entry in entries:
            size = sum((ROOT / "geomprobe" / "data" / "windtunnels" / entry["task"] / name).stat().st_size
                       for name in entry["files"])
            print(f"shipped {entry['task']}: {len(entry['files'])} files, {size / 1e6:.2f} MB, "
                  f"{entry['steps']} steps in {entry['train_seconds']:.0f} s; {entry['scores']['train_length']}")


if __name__ == "__main__":
    main()
