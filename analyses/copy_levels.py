"""The level of every headline decision against N = 3, 5, 10 and 19 untrained copies, each model
meeting the copies of its own run seed (METHODS.md 5.1).

Untrained "models" (fresh initialisations of a built-in model, weight seeds 20, 21, ...) go through
the geometry, sula and mechanisms suites against 19 untrained copies each, every model with its own
run seed (1, 2, ...), so its copies are its own (nulls.copy_seed). An untrained model is
exchangeable with its copies, so each decision ("better than untrained", "worse than untrained")
should come out for about 5% of the models, or less. The copies are drawn i.i.d., so the first N of
a model's 19 are an N-copy comparison: each decision is judged again on them
(judge_against_nulls, the rule the suites use at that N), for N = 3, 5, 10 and 19.

    .venv/bin/python analyses/copy_levels.py --models 24 --out /tmp/copy-levels      # resumable
    .venv/bin/python analyses/copy_levels.py --out /tmp/copy-levels --table          # the table only

Rows (one per model) go to OUT/levels.jsonl as each model finishes; a rerun skips finished models.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np

COUNTS = (3, 5, 10, 19)
SUITES = ("geometry", "sula", "mechanisms")


def run_model(loaded, seed: int, run_seed: int, work: Path, prompts_file: str) -> dict:
    """The three suites on one untrained model against 19 copies of its run seed -> {suite/statistic:
    {"model", "nulls", "higher_is_better"}}."""
    from geomprobe.config import RunConfig
    from geomprobe.nulls import fresh_copy
    from geomprobe.runner import run
    from geomprobe.suites.geometry import GeometryConfig
    from geomprobe.suites.mechanisms import MechanismsConfig
    from geomprobe.suites.sula import SulaConfig

    path = work / f"untrained-{seed}"
    if not path.exists():
        fresh_copy(loaded, seed).model.save_pretrained(path)
        loaded.tokenizer.save_pretrained(path)
    null = dict(null="init:19", null_stop=False)
    on_prompts = work / f"run-{seed}"  # geometry and mechanisms on the demo prompts; sula writes its own
    run(RunConfig(model=str(path), prompts=prompts_file, out=str(on_prompts), seed=run_seed),
        [GeometryConfig(n_per_quintile=4, n_boot=20, n_null=10, init_seeds=0, step0="off", **null),
         MechanismsConfig(n_boot=20, init_seeds=0, **null)], progress=False)
    on_sula = work / f"run-{seed}-sula"
    run(RunConfig(model=str(path), out=str(on_sula), seed=run_seed),
        SulaConfig(n_per_k=12, n_boot=20, controls=(), **null), progress=False)
    row = {}
    for suite in SUITES:
        results = json.loads(((on_sula if suite == "sula" else on_prompts) / suite / "results.json").read_text())
        seeds = [m["seed"] for m in results["untrained_null"]["models"]]
        for name, cmp in results["untrained_null"]["comparisons"].items():
            if "nulls" in cmp:
                row[f"{suite}/{name}"] = {"model": cmp["model"], "nulls": cmp["nulls"],
                                          "higher_is_better": cmp["higher_is_better"], "copy_seeds": seeds}
    return row


def table(rows: list[dict]) -> list[dict]:
    """Per statistic and N: how often 'better' and 'worse' came out, with the nominal 5% + 3 se."""
    from geomprobe.analysis.null_comparison import ABOVE, BELOW, judge_against_nulls

    out = []
    for name in sorted({key for row in rows for key in row["decisions"]}):
        entries = [row["decisions"][name] for row in rows if name in row["decisions"]]
        for n in COUNTS:
            decided = [judge_against_nulls(e["model"], e["nulls"][:n], e["higher_is_better"]) for e in entries
                       if len(e["nulls"]) >= n]
            m = len(decided)
            limit = 0.05 + 3 * math.sqrt(0.05 * 0.95 / m) if m else None
            better = sum(d["status"] == ABOVE for d in decided)
            worse = sum(d["status"] == BELOW for d in decided)
            rules = sorted({d["rule"] for d in decided})
            out.append({"statistic": name, "copies": n, "models": m, "better": better, "worse": worse,
                        "limit": limit, "kept": bool(m and max(better, worse) / m <= limit), "rules": rules})
    return out


def power(rows: list[dict], effects=(0.0, 2.0, 3.0, 5.0)) -> list[dict]:
    """Per N and planted effect: how often 'better' comes out over every model and statistic when
    the untrained model's value is moved towards better by effect x the sd of its 19 copies (the
    copies' own distributions, not Gaussian ones: effect 0 is the level)."""
    from geomprobe.analysis.null_comparison import ABOVE, judge_against_nulls

    out = []
    for effect in effects:
        for n in COUNTS:
            better = total = 0
            for row in rows:
                for entry in row["decisions"].values():
                    nulls = np.array(entry["nulls"], dtype=np.float64)
                    if len(nulls) < n or not np.all(np.isfinite(nulls)):
                        continue
                    sign = 1.0 if entry["higher_is_better"] else -1.0
                    model = entry["model"] + sign * effect * float(nulls.std(ddof=1))
                    better += judge_against_nulls(model, nulls[:n], entry["higher_is_better"])["status"] == ABOVE
                    total += 1
            out.append({"effect_sd": effect, "copies": n, "decisions": total, "better": better,
                        "share": better / total if total else None})
    return out


def print_power(entries: list[dict]) -> None:
    counts = sorted({e["copies"] for e in entries})
    print("| planted effect (copy sd) | " + " | ".join(f"{n} copies" for n in counts) + " |")
    print("|---|" + "---:|" * len(counts))
    for effect in sorted({e["effect_sd"] for e in entries}):
        cells = [next(e for e in entries if e["effect_sd"] == effect and e["copies"] == n) for n in counts]
        print(f"| {effect:g}{' (level)' if effect == 0 else ''} | "
              + " | ".join(f"{100 * c['share']:.1f}% ({c['better']}/{c['decisions']})" for c in cells) + " |")


def print_table(levels: list[dict]) -> None:
    print("| statistic | copies | models | better | worse | level kept (<= 5% + 3 se) | rule |")
    print("|---|---:|---:|---:|---:|---|---|")
    for e in levels:
        print(f"| {e['statistic']} | {e['copies']} | {e['models']} | {e['better']} | {e['worse']} | "
              f"{'yes' if e['kept'] else 'NO'} ({100 * e['limit']:.1f}%) | {', '.join(e['rules'])} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="tiny-llama", help="a built-in model whose fresh initialisations are used")
    parser.add_argument("--models", type=int, default=24, help="untrained 'models' (weight seeds 20, 21, ...)")
    parser.add_argument("--out", required=True, help="work directory (resumable)")
    parser.add_argument("--table", action="store_true", help="print the table of OUT/levels.jsonl and stop")
    args = parser.parse_args()

    work = Path(args.out)
    work.mkdir(parents=True, exist_ok=True)
    store = work / "levels.jsonl"
    rows = [json.loads(line) for line in store.read_text().splitlines()] if store.exists() else []
    if not args.table:
        from geomprobe import load_model
        from geomprobe.models.builtin import demo_prompts_path

        loaded = load_model(args.model, device="cpu")
        done = {row["seed"] for row in rows}
        for index in range(args.models):
            seed = 20 + index
            if seed in done:
                continue
            decisions = run_model(loaded, seed, index + 1, work, str(demo_prompts_path()))
            row = {"model": args.model, "seed": seed, "run_seed": index + 1, "decisions": decisions}
            with store.open("a") as handle:
                handle.write(json.dumps(row) + "\n")
            rows.append(row)
            print(f"model {index + 1}/{args.models} (weight seed {seed}) done", flush=True)
    levels = table(rows)
    print_table(levels)
    print("\npooled over the statistics:")
    for n in COUNTS:
        entries = [e for e in levels if e["copies"] == n]
        m = sum(e["models"] for e in entries)
        print(f"  {n} copies: better {sum(e['better'] for e in entries)}/{m}, worse {sum(e['worse'] for e in entries)}/{m}")
    print("\n'better' for a planted effect, every model and statistic (the copies' own distributions):")
    print_power(power(rows))
    print(f"\n{len(rows)} untrained {args.model} models, each against 19 copies of its own run seed; "
          f"the first N copies give the N-copy decision")


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
