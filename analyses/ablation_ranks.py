"""Is the ablation's within-model rank uniform on untrained models? (METHODS.md 8.3)

On an untrained network the entropy axis is PC1 of values that carry no posterior, so its edit
should be one more draw among its matched random axes: the true axis's rank among 1 + n_random
should be uniform on 1..20. Untrained "models" (fresh initialisations of a built-in model, weight
seeds 100, 101, ...) each go through the ablation suite with 19 matched random axes and no copies;
per condition the ranks are summarised (mean, sd against a uniform's 5.77, how often 1 or 20, the
KS test against uniform with ties broken by a seeded jitter).

    .venv/bin/python analyses/ablation_ranks.py --models 48 --n-per-k 20 --out /tmp/ablation-ranks
    .venv/bin/python analyses/ablation_ranks.py --out /tmp/ablation-ranks --table     # the table only

With --copies N each model also runs against N untrained copies of its own run seed (1, 2, ...),
and the primary statistic's comparison with them (log2 true/random against the copies') is judged
again on the first 2, 3, ..., N copies: how often "better" and "worse" come out on untrained models.

Rows (one per model) go to OUT/ranks.jsonl as each finishes; a rerun skips finished models.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np


def run_model(loaded, seed: int, n_per_k: int, ops: str, work: Path, copies: int = 0) -> tuple[dict, dict]:
    from geomprobe.config import RunConfig
    from geomprobe.nulls import fresh_copy
    from geomprobe.runner import run
    from geomprobe.suites.ablation import AblationConfig

    path = work / f"untrained-{seed}"
    if not path.exists():
        fresh_copy(loaded, seed).model.save_pretrained(path)
        loaded.tokenizer.save_pretrained(path)
    out = work / (f"run-{seed}" if not copies else f"run-{seed}-copies{copies}")
    run(RunConfig(model=str(path), out=str(out), seed=seed - 99 if copies else 0),
        AblationConfig(null=f"init:{copies}" if copies else "off", n_per_k=n_per_k, ops=ops), progress=False)
    results = json.loads((out / "ablation" / "results.json").read_text())
    versus = {c["id"]: {"model": c["primary"]["untrained"]["model"], "nulls": c["primary"]["untrained"]["nulls"]}
              for c in results["conditions"] if copies and "nulls" in (c["primary"]["untrained"] or {})}
    return {c["id"]: c["primary"]["statistic"]["rank"] for c in results["conditions"]}, versus


def copy_levels(rows: list[dict]) -> list[dict]:
    """Per condition and N: "better" / "worse" of log2 true/random against the first N copies."""
    from geomprobe.analysis.null_comparison import ABOVE, BELOW, judge_against_nulls

    out = []
    names = sorted({name for row in rows for name in row.get("versus_copies") or {}})
    most = max((len(v["nulls"]) for row in rows for v in (row.get("versus_copies") or {}).values()), default=0)
    for name in names:
        entries = [row["versus_copies"][name] for row in rows if name in (row.get("versus_copies") or {})]
        for n in range(2, most + 1):
            judged = [judge_against_nulls(e["model"], e["nulls"][:n]) for e in entries if len(e["nulls"]) >= n]
            out.append({"condition": name, "copies": n, "models": len(judged),
                        "better": sum(j["status"] == ABOVE for j in judged),
                        "worse": sum(j["status"] == BELOW for j in judged)})
    return out


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
    parser.add_argument("--copies", type=int, default=0, help="untrained copies per model (per-run seeds; 0: none)")
    parser.add_argument("--table", action="store_true", help="print the table of OUT/ranks.jsonl and stop")
    args = parser.parse_args()

    work = Path(args.out)
    work.mkdir(parents=True, exist_ok=True)
    store = work / "ranks.jsonl"
    rows = [json.loads(line) for line in store.read_text().splitlines()] if store.exists() else []
    if not args.table:
        from geomprobe import load_model

        loaded = load_model(args.model, device="cpu")
        done = {(row["seed"], row["n_per_k"], row["ops"], row.get("copies", 0)) for row in rows}
        for seed in range(100, 100 + args.models):
            if (seed, args.n_per_k, args.ops, args.copies) in done:
                continue
            ranks, versus = run_model(loaded, seed, args.n_per_k, args.ops, work / f"k{args.n_per_k}", args.copies)
            row = {"model": args.model, "seed": seed, "n_per_k": args.n_per_k, "ops": args.ops, "copies": args.copies,
                   "ranks": ranks, "versus_copies": versus}
            with store.open("a") as handle:
                handle.write(json.dumps(row) + "\n")
            rows.append(row)
            print(f"model {seed - 99}/{args.models} (weight seed {seed}) done", flush=True)
    for n_per_k, copies in sorted({(row["n_per_k"], row.get("copies", 0)) for row in rows}):
        chosen = [row for row in rows if (row["n_per_k"], row.get("copies", 0)) == (n_per_k, copies)]
        print(f"\n{len(chosen)} untrained {args.model} models, --n-per-k {n_per_k}, 19 matched random axes each"
              + (f", {copies} untrained copies each (run seeds 1, 2, ...)" if copies else ""))
        print("| condition | models | mean rank (uniform 10.5) | sd (5.77) | rank 1 | rank 20 | P(1 or 20 this often) "
              "| KS p |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        for e in table(chosen):
            print(f"| {e['condition']} | {e['models']} | {e['mean']:.2f} | {e['sd']:.2f} | {e['rank_1']} | "
                  f"{e['rank_20']} | {e['extreme_p']:.2g} | {e['ks_p']:.3f} |")
        levels = copy_levels(chosen)
        if levels:
            print("\nlog2 true/random against each model's own untrained copies (the first N):")
            print("| condition | copies | models | better | worse |")
            print("|---|---:|---:|---:|---:|")
            for e in levels:
                print(f"| {e['condition']} | {e['copies']} | {e['models']} | {e['better']} | {e['worse']} |")


if __name__ == "__main__":
    main()
