"""Is the ablation's within-model rank uniform on untrained models? (METHODS.md 8.3)

On an untrained network the entropy axis is PC1 of values that carry no posterior, so its edit
should be one more draw among its matched random axes: the true axis's rank among 1 + n_random
should be uniform on 1..20. Untrained "models" (fresh initialisations of a built-in model, weight
seeds 100, 101, ...) each go through the ablation suite with 19 matched random axes and no copies;
per condition the ranks are summarised (mean, sd against a uniform's 5.77, how often 1 or 20, the
KS test against uniform with ties broken by a seeded jitter).

    .venv/bin/python analyses/ablation_ranks.py --models 48 --n-per-k 20 --out /tmp/ablation-ranks
    .venv/bin/python analyses/ablation_ranks.py --out /tmp/ablation-ranks --table     # the table only

Rows (one per model) go to OUT/ranks.jsonl as each finishes; a rerun skips finished models.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np


def run_model(loaded, seed: int, n_per_k: int, ops: str, work: Path) -> dict:
    from geomprobe.config import RunConfig
    from geomprobe.nulls import fresh_copy
    from geomprobe.runner import run
    from geomprobe.suites.ablation import AblationConfig

    path = work / f"untrained-{seed}"
    if not path.exists():
        fresh_copy(loaded, seed).model.save_pretrained(path)
        loaded.tokenizer.save_pretrained(path)
    out = work / f"run-{seed}"
    run(RunConfig(model=str(path), out=str(out)), AblationConfig(null="off", n_per_k=n_per_k, ops=ops),
        progress=False)
    results = json.loads((out / "ablation" / "results.json").read_text())
    return {c["id"]: c["primary"]["statistic"]["rank"] for c in results["conditions"]}


def table(rows: list[dict]) -> list[dict]:
    from scipy import stats

    out = []
    for name in sorted({key for row in rows for key in row["ranks"]}):
        ranks = np.array([row["ranks"][name] for row in rows if row["ranks"].get(name) is not None])
        if not len(ranks):
            continue
        jitter = np.random.default_rng(0).random(len(ranks))
        extreme = int(np.sum((ranks == 1) | (ranks == 20)))
        out.append({"condition": name, "models": len(ranks), "mean": float(ranks.mean()),
                    "sd": float(ranks.std(ddof=1)), "rank_1": int(np.sum(ranks == 1)),
                    "rank_20": int(np.sum(ranks == 20)),
                    "extreme_p": float(stats.binomtest(extreme, len(ranks), 0.1, alternative="greater").pvalue),
                    "ks_p": float(stats.kstest((ranks - jitter) / 20, "uniform").pvalue)})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="tiny-llama", help="a built-in model whose fresh initialisations are used")
    parser.add_argument("--models", type=int, default=24, help="untrained 'models' (weight seeds 100, 101, ...)")
    parser.add_argument("--n-per-k", type=int, default=20, help="the suite's --n-per-k (its default is 100)")
    parser.add_argument("--ops", default="cut,only,shift", help="the suite's --ops")
    parser.add_argument("--out", required=True, help="work directory (resumable)")
    parser.add_argument("--table", action="store_true", help="print the table of OUT/ranks.jsonl and stop")
    args = parser.parse_args()

    work = Path(args.out)
    work.mkdir(parents=True, exist_ok=True)
    store = work / "ranks.jsonl"
    rows = [json.loads(line) for line in store.read_text().splitlines()] if store.exists() else []
    if not args.table:
        from geomprobe import load_model

        loaded = load_model(args.model, device="cpu")
        done = {(row["seed"], row["n_per_k"], row["ops"]) for row in rows}
        for seed in range(100, 100 + args.models):
            if (seed, args.n_per_k, args.ops) in done:
                continue
            row = {"model": args.model, "seed": seed, "n_per_k": args.n_per_k, "ops": args.ops,
                   "ranks": run_model(loaded, seed, args.n_per_k, args.ops, work / f"k{args.n_per_k}")}
            with store.open("a") as handle:
                handle.write(json.dumps(row) + "\n")
            rows.append(row)
            print(f"model {seed - 99}/{args.models} (weight seed {seed}) done", flush=True)
    for n_per_k in sorted({row["n_per_k"] for row in rows}):
        chosen = [row for row in rows if row["n_per_k"] == n_per_k]
        print(f"\n{len(chosen)} untrained {args.model} models, --n-per-k {n_per_k}, 19 matched random axes each")
        print("| condition | models | mean rank (uniform 10.5) | sd (5.77) | rank 1 | rank 20 | P(1 or 20 this often) "
              "| KS p |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        for e in table(chosen):
            print(f"| {e['condition']} | {e['models']} | {e['mean']:.2f} | {e['sd']:.2f} | {e['rank_1']} | "
                  f"{e['rank_20']} | {e['extreme_p']:.2g} | {e['ks_p']:.3f} |")


if __name__ == "__main__":
    main()
