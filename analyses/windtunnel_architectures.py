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
    .venv/bin/python analyses/windtunnel_architectures.py --clusters --archs transformer,mamba    # HMM last layer

Each cell trains into OUT/TASK-ARCH-sSEED, resumable bit for bit (`--until N` stops at step N with
the state saved; the next call continues it). The transformer at seed 0 is the shipped reference
tunnel's own run when runs/reference/TASK holds it (scripts/reference_windtunnels.py). Finished
cells are appended to OUT/results.jsonl and to analyses/results/windtunnel_architectures-DATE.jsonl
(committed: a cell found there is not trained again, and `--table` prints every one).

runs/ is not kept between sessions, so a cell that takes several sessions carries its state in
the repository: `--save-states` copies each unfinished cell's resumable state to
analyses/state/CELL/state.pt.xz (weights, optimizer, RNGs, step: about 9 MB compressed), and a later call on a
fresh checkout starts that cell from there. Bit for bit only on the same CPU model and thread
count (train.py's note); another CPU continues it with different low bits.

`--clusters` reads each finished HMM cell's last layer (the input of its output head) at every
observation of 200 held-out sequences and clusters it (geomprobe.analysis.clusters: k-means, the
count with the largest silhouette over 2..10, purity and adjusted Rand index against the true
hidden state at 5 clusters), beside two controls measured the same way: the same architecture
untrained (seed 1000 + seed), and the exact filter p(s_t | o_1..t) itself (the most any
representation of the posterior can tell about the true state). Paper I: Mamba's last layer forms
five clusters on its 5-state HMM. Results in OUT/clusters.jsonl.
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
STATES = ROOT / "analyses" / "state"  # committed resumable states of cells that span sessions
COMMITTED = ROOT / "analyses" / "results"  # finished cells, kept in the repository (runs/ is not)


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
    restore_state(directory)
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


def restore_state(directory: Path) -> None:
    """Start a cell from its committed state (xz-compressed) when this checkout has none of its own."""
    import lzma
    import shutil

    committed = STATES / directory.name / "state.pt.xz"
    state = directory / "checkpoints" / "state.pt"
    if committed.exists() and not state.exists():
        state.parent.mkdir(parents=True, exist_ok=True)
        with lzma.open(committed) as source, open(state, "wb") as target:
            shutil.copyfileobj(source, target)
        print(f"{directory.name}: continuing from the committed state {committed.relative_to(ROOT)}", flush=True)


def save_states(out: Path) -> None:
    """Copy each unfinished cell's resumable state to analyses/state/CELL/state.pt.xz (to commit), and
    remove the committed state of a cell that has finished."""
    import lzma
    import shutil

    import torch

    for state in sorted(out.glob("*/checkpoints/state.pt")):
        saved = torch.load(state, map_location="cpu", weights_only=True)
        name = state.parent.parent.name
        target = STATES / name / "state.pt.xz"
        if saved.get("done"):
            if target.exists():
                shutil.rmtree(target.parent)
                print(f"{name}: finished; its committed state {target.relative_to(ROOT)} removed")
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(state, "rb") as source, lzma.open(target, "wb", preset=9) as compressed:
            shutil.copyfileobj(source, compressed)
        print(f"{name}: step {saved['step']} of {saved['config']['steps']} saved to {target.relative_to(ROOT)} "
              f"({target.stat().st_size / 1e6:.1f} MB; {state.stat().st_size / 1e6:.1f} MB uncompressed)")


def hmm_clusters(directory: Path, n_sequences: int = 200, seed: int = 0) -> dict:
    """Last-layer cluster structure of a trained HMM cell, of its untrained copy and of the exact filter."""
    import numpy as np

    from geomprobe.analysis.clusters import cluster_structure
    from geomprobe.windtunnel.trained import last_hidden, load_trained, untrained_copy

    module, task, metrics = load_trained(directory)
    batch = task.sample(n_sequences, np.random.default_rng(10_000 + seed))
    where = batch.supervised
    states = batch.targets[where]  # the true state's token id at each observation
    others = {"map_state": batch.bayes[where].argmax(-1),  # the exact filter's most probable state
              "observation": batch.tokens[where]}  # the current observation's symbol
    copy, _ = untrained_copy(metrics, seed=1000 + metrics["config"]["seed"])
    out = {"n_sequences": n_sequences, "n_points": int(where.sum()), "arch": metrics["config"]["arch"]}
    for name, X in (("trained", last_hidden(module, batch.tokens)[where]),
                    ("untrained", last_hidden(copy, batch.tokens)[where]),
                    ("exact_filter", batch.bayes[where])):
        out[name] = cluster_structure(X, states, seed=seed, others=others).to_dict()
    out["map_accuracy"] = float((np.asarray(task.answer_ids)[batch.bayes[where].argmax(-1)] == states).mean())
    return out


def print_clusters(rows: list[dict]) -> None:
    print("5 clusters (k-means) scored against the true state, the exact filter's most probable state and the "
          "current observation: purity (its shuffled-label chance level) and adjusted Rand index")
    print(f"{'arch':12} {'seed':>4} {'representation':14} {'count':>5} {'silh@5':>6}  {'true state':>18}  "
          f"{'MAP state':>18}  {'observation':>18}")
    for row in rows:
        for name in ("trained", "untrained", "exact_filter"):
            found = row[name]
            scores = [found["at_labels"], found["others"]["map_state"]["at_labels"],
                      found["others"]["observation"]["at_labels"]]
            cells = "  ".join(f"{at['purity']:.3f} ({at['purity_shuffled']:.3f}) {at['adjusted_rand']:6.3f}"
                              for at in scores)
            print(f"{row['arch']:12} {row['seed']:4d} {name:14} {found['count']:5d} "
                  f"{found['at_labels']['silhouette']:6.3f}  {cells}")
    if rows:
        print(f"accuracy of the exact filter's most probable state: {rows[0]['map_accuracy']:.3f}")


def read_results(path: Path) -> dict:
    """(task, arch, seed) -> row of every finished cell: the committed ones
    (analyses/results/windtunnel_architectures-DATE.jsonl), then this output folder's."""
    rows = {}
    for source in [*sorted(COMMITTED.glob("windtunnel_architectures-*.jsonl")), path]:
        if source.exists():
            for line in source.read_text().splitlines():
                row = json.loads(line)
                rows[(row["task"], row["arch"], row["seed"])] = row
    return rows


def keep(row: dict, results: Path) -> None:
    """Append a finished cell to the output folder's results and to today's committed file."""
    import datetime

    for path in (results, COMMITTED / f"windtunnel_architectures-{datetime.date.today().isoformat()}.jsonl"):
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a") as handle:
            handle.write(json.dumps(row) + "\n")


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
    parser.add_argument("--clusters", action="store_true", help="cluster the last layer of the finished HMM cells")
    parser.add_argument("--save-states", action="store_true",
                        help="copy unfinished cells' resumable states to analyses/state/ (to commit), train nothing")
    parser.add_argument("--out", default="runs/windtunnel-architectures")
    args = parser.parse_args()

    import logging

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results = out / "results.jsonl"
    rows = read_results(results)
    if args.save_states:
        save_states(out)
        return
    if args.clusters:
        found = []
        for arch in args.archs.split(","):
            for seed in (int(s) for s in args.seeds.split(",")):
                directory = cell_dir(out, "hmm", arch, seed)
                if arch == "transformer" and seed == 0 and not (directory / "metrics.json").exists():
                    from geomprobe.windtunnel.reference import shipped_dir

                    directory = shipped_dir("hmm")  # the shipped reference tunnel is the transformer's seed 0
                if not (directory / "metrics.json").exists():
                    print(f"hmm {arch} seed {seed}: not trained yet ({directory})")
                    continue
                row = {"task": "hmm", "arch": arch, "seed": seed, "directory": str(directory),
                       **hmm_clusters(directory, seed=seed)}
                found.append(row)
                with (out / "clusters.jsonl").open("a") as handle:
                    handle.write(json.dumps(row) + "\n")
        print_clusters(found)
        return
    if not args.table:
        for task in args.tasks.split(","):
            for arch in args.archs.split(","):
                for seed in (int(s) for s in args.seeds.split(",")):
                    if (task, arch, seed) in rows:
                        continue
                    row = run_cell(out, task, arch, seed, args.until)
                    if row is not None:
                        rows[(task, arch, seed)] = row
                        keep(row, results)
    print_table(rows)
    print("recipes:", {task: asdict(cell_config(task, "transformer", 0)) for task in sorted({k[0] for k in rows})})


if __name__ == "__main__":
    main()
