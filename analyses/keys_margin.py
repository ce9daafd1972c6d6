"""Where trained models' key frames sit against their untrained copies' (METHODS.md 5.2).

The keys criterion is a level: a model's mean off-diagonal |cos| between key columns (mean over
layers) at most `keys_margin` times its untrained copies'. This script measures, for every trained
model geomprobe can load here, the ratio model / mean of N copies (weights only: no forward pass),
with a 95% interval from the copies' spread (the ratio to each copy, a t interval on their log):

    .venv/bin/python analyses/keys_margin.py                       # every model, 19 copies each
    .venv/bin/python analyses/keys_margin.py --models windtunnel-sula,smollm2-135m --copies 10

Untrained models of the built-in shapes (weight seeds 20-23) are measured the same way, so the
table shows the ratio an untrained network has.
"""

from __future__ import annotations

import argparse
import json
import math

import numpy as np

TRAINED = ("windtunnel-sula", "windtunnel-bijection", "windtunnel-hmm", "windtunnel-recall", "all-minilm-l6-v2",
           "smollm2-135m", "gemma3-270m")
UNTRAINED = ("tiny-llama", "tiny-neox")


def mean_abs_cos(loaded) -> float:
    from geomprobe.analysis.key_orthogonality import key_orthogonality
    from geomprobe.weights import key_weight_stack

    return float(np.mean(key_orthogonality(key_weight_stack(loaded), threshold=0.2).to_dict()["layer_mean"]))


def ratio_entry(name: str, loaded, copies: int, run_seed: int = 0) -> dict:
    from geomprobe.nulls import copy_seed, each_null, null_specs

    model = mean_abs_cos(loaded)
    values = [mean_abs_cos(copy) for _, copy in each_null(loaded, null_specs(f"init:{copies}", loaded,
                                                                              run_seed=run_seed))]
    logs = np.log(model / np.array(values))
    from scipy.stats import t as student_t

    half = float(student_t.ppf(0.975, len(logs) - 1)) * float(logs.std(ddof=1)) / math.sqrt(len(logs))
    ratio = model / float(np.mean(values))
    return {"model": name, "mean_abs_cos": model, "copies_mean": float(np.mean(values)),
            "copies_sd": float(np.std(values, ddof=1)), "copies": copies,
            "copy_seeds": [copy_seed(run_seed, i) for i in range(copies)], "ratio": ratio,
            "ratio_ci95": [float(math.exp(logs.mean() - half)), float(math.exp(logs.mean() + half))]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default=",".join(TRAINED), help="comma-separated model specs")
    parser.add_argument("--copies", type=int, default=19)
    parser.add_argument("--json", default=None, help="also write the rows here")
    args = parser.parse_args()

    from geomprobe import load_model
    from geomprobe.nulls import fresh_copy

    rows = []
    for name in [m for m in args.models.split(",") if m]:
        rows.append({"kind": "trained", **ratio_entry(name, load_model(name, device="cpu"), args.copies)})
        print(json.dumps(rows[-1]), flush=True)
    for name in UNTRAINED:
        base = load_model(name, device="cpu")
        for seed in range(20, 24):
            rows.append({"kind": f"untrained (weight seed {seed})",
                         **ratio_entry(name, fresh_copy(base, seed), args.copies, run_seed=seed)})
            print(json.dumps(rows[-1]), flush=True)
    print("\n| model | kind | mean key abs cos | untrained copies | ratio [95% CI] |")
    print("|---|---|---:|---:|---:|")
    for r in rows:
        print(f"| {r['model']} | {r['kind']} | {r['mean_abs_cos']:.4f} | {r['copies_mean']:.4f} +- {r['copies_sd']:.4f} "
              f"({r['copies']}) | {r['ratio']:.2f} [{r['ratio_ci95'][0]:.2f}, {r['ratio_ci95'][1]:.2f}] |")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(rows, handle, indent=1)


if __name__ == "__main__":
    main()
