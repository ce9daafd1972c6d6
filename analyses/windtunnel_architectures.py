"""Paper I's Table 1 on this machine: architectures against the exact posterior on the wind tunnels.

Each task is trained with its built-in recipe (geomprobe.windtunnel.builtin.RECIPES: the task's
shape, batch, learning rate, step budget, target the exact predictive, one CPU thread) for every
architecture, the LSTM, MLP and Mamba sized to the transformer's parameter count, and for each
seed; every cell is scored on held-out sequences against Bayes (entropy MAE and KL in bits,
accuracy where Bayes is one-hot; HMM also at 1.5x and 2.5x the training length) and printed
next to paper I's value, with its steps and wall time.

    .venv/bin/python analyses/windtunnel_architectures.py --tasks bijection --archs lstm,mlp
    .venv/bin/python analyses/windtunnel_architectures.py --tasks hmm --archs lstm --until 4000   # in sessions
    .venv/bin/python analyses/windtunnel_architectures.py --table                                 # print only

Each cell trains into OUT/TASK-ARCH-sSEED, resumable bit for bit (`--until N` stops at step N with
the state saved; the next call continues it). The transformer at seed 0 is the shipped reference
tunnel's own run when runs/reference/TASK holds it (scripts/reference_windtunnels.py). Finished
cells are appended to OUT/results.jsonl.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict, replace
from pathlib import Path

# Paper I (v3): entropy MAE in bits, recall accuracy
PAPER = {
    ("bijection", "transformer"): "MAE 0.007", ("bijection", "mlp"): "MAE ~1.85",
    ("hmm", "transformer"): "MAE 0.049", ("hmm", "mamba"): "MAE 0.024", ("hmm", "lstm"): "MAE 0.411",
    ("hmm", "mlp"): "MAE 0.40",
    ("recall", "transformer"): "acc 100%", ("recall", "mamba"): "acc 97.8%", ("recall", "lstm"): "acc 0.5%",
}
ROOT = Path(__file__).resolve().parent.parent


def cell_config(task: str, arch: str, seed: int):
    from geomprobe.windtunnel.builtin import recipe

    return replace(recipe(task), arch=arch, seed=seed)


def cell_dir(out: Path, task: str, arch: str, seed: int) -> Path:
    reference = ROOT / "runs" / "reference" / task
    if arch == "transformer" and seed == 0 and (reference / "checkpoints" / "state.pt").exists():
        return reference
    return out / f"{task}-{arch}-s{seed}"


def run_cell(out: Path, task: str, arch: str, seed: int, until: int | None) -> dict | None:
    from geomprobe.windtunnel.train import train

    directory = cell_dir(out, task, arch, seed)
    metrics = train(cell_config(task, arch, seed), directory, progress=False, resume=True, until=until,
                    recipe=f"windtunnel-{task}'s recipe, arch {arch}, seed {seed}")
    if not metrics.get("done", True):
        print(f"{task} {arch} seed {seed}: stopped at step {metrics['steps']} (resumable: {directory})", flush=True)
        return None
    return {"task": task, "arch": arch, "seed": seed, "n_params": metrics["n_params"], "steps": metrics["steps"],
            "train_seconds": metrics["train_seconds"], "config": metrics["config"],
            "eval": {name: {key: score.get(key) for key in ("entropy_mae_bits", "kl_bits", "mass_on_feasible",
                                                           "accuracy_determined", "seq_len")}
                     for name, score in metrics["eval"].items()}}


def read_results(path: Path) -> dict:
    rows = {}
    if path.exists():
        for line in path.read_text().splitlines():
            row = json.loads(line)
            rows[(row["task"], row["arch"], row["seed"])] = row
    return rows


def print_table(rows: dict) -> None:
    print(f"{'task':10} {'arch':12} {'seed':>4} {'params':>8} {'steps':>6} {'wall s':>7} {'eval':10} "
          f"{'MAE bits':>9} {'KL bits':>9} {'acc':>6}  paper I")
    for (task, arch, seed), row in sorted(rows.items()):
        for name, score in row["eval"].items():
            accuracy = score["accuracy_determined"]
            label = "train len" if name == "train_length" else f"{score['seq_len']} obs"
            print(f"{task:10} {arch:12} {seed:4d} {row['n_params']:8d} {row['steps']:6d} {row['train_seconds']:7.0f} "
                  f"{label:10} {score['entropy_mae_bits']:9.4f} {score['kl_bits']:9.4f} "
                  f"{'-' if accuracy is None else f'{accuracy:.3f}':>6}  {PAPER.get((task, arch), '')}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", default="bijection,hmm,recall")
    parser.add_argument("--archs", default="transformer,lstm,mlp,mamba")
    parser.add_argument("--seeds", default="0,1")
    parser.add_argument("--until", type=int, default=None, help="stop each unfinished cell at this step (resumable)")
    parser.add_argument("--table", action="store_true", help="print the finished cells only, train nothing")
    parser.add_argument("--out", default="runs/windtunnel-architectures")
    args = parser.parse_args()

    import logging

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results = out / "results.jsonl"
    rows = read_results(results)
    if not args.table:
        for task in args.tasks.split(","):
            for arch in args.archs.split(","):
                for seed in (int(s) for s in args.seeds.split(",")):
                    if (task, arch, seed) in rows:
                        continue
                    row = run_cell(out, task, arch, seed, args.until)
                    if row is not None:
                        rows[(task, arch, seed)] = row
                        with results.open("a") as handle:
                            handle.write(json.dumps(row) + "\n")
    print_table(rows)
    print("recipes:", {task: asdict(cell_config(task, "transformer", 0)) for task in sorted({k[0] for k in rows})})


if __name__ == "__main__":
    main()
