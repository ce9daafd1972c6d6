"""How far the quantisation of the packaged real models moves each geometry headline, against the
distance between the model and its untrained copies (METHODS.md section 12).

For each model: the geometry suite on the fixed 75-prompt sample (analyses/data/paper3-mixed-75.jsonl,
every prompt, no copies) for K copies of the dequantized model perturbed like its quantisation error
(geomprobe.quantization: every weight of every matrix moved within half its block's 4-bit step),
each passed to geomprobe.run as a model object, so every number is the suite's own. The model itself
and its untrained copies come from the paper3 part `<model>-geometry-copies` (the same prompts, 19
or 10 copies; analyses/paper3_real_models.py), which must be done first. A headline is resolvable
on the quantised copy when its largest move under perturbation is smaller than its distance from
the copies' mean. Prints a table and writes analyses/results/paper3/quantisation-<model>.json.

    .venv/bin/python analyses/quantisation_bound.py --models smollm2-135m gemma3-270m --k 3
"""

from __future__ import annotations

import argparse
import copy
import json
import time
from pathlib import Path

import numpy as np

import geomprobe
from geomprobe.config import RunConfig
from geomprobe.models import load_model
from geomprobe.models.borrowed import borrow
from geomprobe.quantization import perturb_like_quantisation
from geomprobe.suites.geometry import GeometryConfig

HERE = Path(__file__).resolve().parent
FIXED = HERE / "data" / "paper3-mixed-75.jsonl"
PARTS = {"smollm2-135m": "smollm2", "gemma3-270m": "gemma3"}


def headlines(results: dict) -> dict:
    """The geometry suite's headline figures from its results.json."""
    vm, keys, focus = results["value_manifold"], results["key_orthogonality"], results["attention_focusing"]
    return {"pc1": vm["pc1"], "pc12": vm["pc12"], "abs_rho_pc1_entropy": vm["abs_rho_pc1_entropy"],
            "keys_mean_abs_cos": keys["mean"], "focusing": focus["focusing"]}


COMPARED = {"pc1": "pc1", "pc12": "pc12", "keys_mean_abs_cos": "keys", "focusing": "focusing"}


def copies_of(results: dict) -> dict:
    """headline -> the untrained copies' values, from the part with copies (untrained_null.comparisons)."""
    comparisons = (results.get("untrained_null") or {}).get("comparisons") or {}
    return {headline: comparisons[key]["nulls"] for headline, key in COMPARED.items() if key in comparisons}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", nargs="+", default=list(PARTS))
    parser.add_argument("--k", type=int, default=3, help="perturbed copies")
    parser.add_argument("--out", default="runs/paper3-quantisation")
    args = parser.parse_args()
    for alias in args.models:
        with_copies = HERE / "results" / "paper3" / f"{PARTS[alias]}-geometry-copies.json"
        if not with_copies.exists():
            raise SystemExit(f"run `analyses/paper3_real_models.py --parts {PARTS[alias]}-geometry-copies` first")
        reference = json.loads(with_copies.read_text())["results"]
        base = headlines(reference)
        loaded = load_model(alias, device="cpu")
        moved = []
        start = time.time()
        for seed in range(1, args.k + 1):
            noisy = copy.deepcopy(loaded.model)
            perturb_like_quantisation(noisy, seed=seed)
            borrowed = borrow(noisy, loaded.tokenizer, name=f"{alias}-perturbed-{seed}")
            config = RunConfig(model=borrowed, prompts=str(FIXED), device="cpu",
                               out=f"{args.out}/{alias}-perturbed-{seed}")
            run_dir = geomprobe.run(config, GeometryConfig(n_per_quintile=0, null="off"), quiet=True)
            moved.append(headlines(json.loads((Path(run_dir) / "geometry" / "results.json").read_text())))
            del noisy, borrowed
        copies = copies_of(reference)
        rows = {}
        for key, value in base.items():
            moves = [abs(m[key] - value) for m in moved]
            null = copies.get(key)
            distance = None if not null else abs(value - float(np.mean(null)))
            rows[key] = {"model": value, "perturbed": [m[key] for m in moved], "max_move": max(moves),
                         "copies_mean": None if not null else float(np.mean(null)),
                         "distance_from_copies": distance,
                         "resolvable": None if distance is None else bool(max(moves) < distance)}
        record = {"model": alias, "k_perturbed": args.k, "prompts": str(FIXED.relative_to(HERE.parent)),
                  "seconds": round(time.time() - start), "rows": rows}
        out = HERE / "results" / "paper3" / f"quantisation-{PARTS[alias]}.json"
        out.write_text(json.dumps(record, indent=1) + "\n")
        print(f"{alias}: {args.k} perturbed copies in {record['seconds']} s")
        print(f"  {'headline':22s} {'model':>8s} {'max move':>9s} {'copies':>8s} {'distance':>9s}  resolvable")
        for key, row in rows.items():
            copies_text = "-" if row["copies_mean"] is None else f"{row['copies_mean']:8.4f}"
            distance_text = "-" if row["distance_from_copies"] is None else f"{row['distance_from_copies']:9.4f}"
            print(f"  {key:22s} {row['model']:8.4f} {row['max_move']:9.4f} {copies_text:>8s} {distance_text:>9s}  "
                  f"{row['resolvable']}", flush=True)


if __name__ == "__main__":
    main()
