"""Does the comparison with untrained copies keep its level, and what can it detect? (METHODS.md 5.1)

Untrained "models" (fresh initialisations of a built-in model, seeds 20, 21, ...) go through the
geometry suite against N untrained copies; an untrained model is exchangeable with its copies, so
z = (model - null mean) / null sd should average 0 and "above untrained" should be rare. Two
ways of drawing the copies' prompts are compared on the same runs:

- own (geomprobe's): each copy draws its own stratified sample from the same candidates by its
  own next-token entropy (the suite's untrained_null);
- shared (the old way): the copies are measured on the model's sample, chosen by the model's
  entropy (recomputed here on the same copies).

Then the power of the rule for N copies (Gaussian nulls): the minimum detectable effect and the
probability of detecting 2 sd.

    .venv/bin/python analyses/null_calibration.py --model tiny-llama --models 10 --nulls 10
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import numpy as np

from geomprobe import load_model
from geomprobe.analysis.null_comparison import RANK_RULE_MIN, explained_share, mde_sd, power_at
from geomprobe.config import RunConfig
from geomprobe.extraction import ExtractionConfig, extract
from geomprobe.nulls import INIT_SEED0, fresh_copy
from geomprobe.prompts import read_prompts
from geomprobe.runner import run
from geomprobe.suites.geometry import GeometryConfig


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="tiny-llama", help="a built-in model whose fresh initialisations are used")
    parser.add_argument("--models", type=int, default=10, help="untrained 'models' (seeds 20, 21, ...)")
    parser.add_argument("--nulls", type=int, default=10, help="untrained copies per model (init:N)")
    parser.add_argument("--n-per-quintile", type=int, default=4)
    parser.add_argument("--sample", choices=("length", "entropy"), default="entropy",
                        help="how each run draws its sample (the suite's --sample; the own-versus-shared "
                             "comparison means something for entropy samples only)")
    parser.add_argument("--prompts", default=None, help="candidates (default: the 60 built-in demo prompts)")
    parser.add_argument("--out", default=None, help="work directory (default: a temporary one)")
    args = parser.parse_args()

    loaded = load_model(args.model, device="cpu")
    work = Path(args.out or tempfile.mkdtemp(prefix="null-calibration-"))
    work.mkdir(parents=True, exist_ok=True)
    if args.prompts is None:
        from geomprobe.models.builtin import demo_prompts_path

        prompts_file = str(demo_prompts_path())
    else:
        prompts_file = args.prompts
    candidates = {p.id: p for p in read_prompts(prompts_file)}
    copies = [fresh_copy(loaded, INIT_SEED0 + i) for i in range(args.nulls)]  # the suite's init seeds
    rows = []
    for seed in range(20, 20 + args.models):
        path = work / f"untrained-{seed}"
        if not path.exists():
            fresh_copy(loaded, seed).model.save_pretrained(path)
            loaded.tokenizer.save_pretrained(path)
        out = work / f"run-{seed}"
        run(RunConfig(model=str(path), prompts=prompts_file, out=str(out)),
            GeometryConfig(n_per_quintile=args.n_per_quintile, n_boot=20, n_null=10, init_seeds=0, step0="off",
                           null=f"init:{args.nulls}", sample=args.sample), progress=False)
        results = json.loads((out / "geometry" / "results.json").read_text())
        own = results["untrained_null"]["comparisons"]["pc1"]
        sample = [candidates[i] for i in json.loads((out / "geometry" / "sample.json").read_text())["ids"]]
        config = ExtractionConfig(layers=[loaded.adapter.shape.n_layers - 1], readouts=("values",), tokens=[])
        shared = [explained_share(1)(extract(copy, sample, config, progress=False)["values"][:, -1])
                  for copy in copies]
        rows.append({"seed": seed, "model": own["model"], "own_mean": own["null_mean"], "own_sd": own["null_sd"],
                     "own_status": own["status"], "shared_mean": float(np.mean(shared)),
                     "shared_sd": float(np.std(shared, ddof=1))})
        row = rows[-1]
        print(f"seed {seed}: PC1 {row['model']:.3f}; own samples {row['own_mean']:.3f} +- {row['own_sd']:.3f} "
              f"({row['own_status']}); shared sample {row['shared_mean']:.3f} +- {row['shared_sd']:.3f}", flush=True)
    for way in ("own", "shared"):
        z = np.array([(r["model"] - r[f"{way}_mean"]) / r[f"{way}_sd"] for r in rows])
        print(f"{way:>6} samples: mean z {z.mean():+.2f} (se {z.std(ddof=1) / np.sqrt(len(z)):.2f}) over "
              f"{len(z)} untrained models, {args.nulls} copies each")
    print(f"'above untrained' with own samples: {sum(r['own_status'] == 'above untrained' for r in rows)} of "
          f"{len(rows)}")
    print("power (Gaussian nulls, one-sided p <= 0.05): copies, rule, minimum detectable effect (sd), P(detect 2 sd)")
    for n in (3, 5, 10, 19, 39):
        rule = "rank" if n >= RANK_RULE_MIN else "t"
        print(f"  {n:>3} {rule:>4} {mde_sd(n, rule):.2f} {power_at(n, rule, 2.0):.2f}")
    (work / "calibration.json").write_text(json.dumps(rows, indent=1) + "\n")
    print(f"rows: {work / 'calibration.json'}")


if __name__ == "__main__":
    main()
