"""How far the quantisation of the packaged real models moves each headline, against the distance
between the model and its untrained copies (METHODS.md section 12).

For each model: the headline figures (last-layer value PC1 and PC1+PC2, mean key |cos|, focusing,
mean next-token entropy) on a fixed prompt set (the first N mixed-corpus prompts of each source),
for the dequantized model, for K copies perturbed like its quantisation error
(geomprobe.quantization: each weight moved within half its block's 4-bit step), and for U untrained
copies (the architecture freshly initialised from its config, seeds 1000+). A headline is
resolvable on the quantised copy when its largest move under perturbation is smaller than its
distance from the copies' mean. Prints a table and writes analyses/results/quantisation_bound-<date>.json.

    .venv/bin/python analyses/quantisation_bound.py --models smollm2-135m gemma3-270m --k 3 --u 3 --n 8
"""

from __future__ import annotations

import argparse
import copy
import datetime
import json
import time
from pathlib import Path

import numpy as np
import torch
import transformers

from geomprobe.analysis.focusing import attention_focusing
from geomprobe.analysis.key_orthogonality import key_orthogonality
from geomprobe.analysis.value_manifold import value_manifold
from geomprobe.corpora import load_corpus
from geomprobe.extraction import ExtractionConfig, extract
from geomprobe.models import load_model
from geomprobe.quantization import perturb_like_quantisation
from geomprobe.weights import key_weight_stack

HEADLINES = ("pc1", "pc12", "orth_mean", "focusing", "next_entropy_bits_mean")


def headline(model, tokenizer, prompts) -> dict:
    ex = extract(model, prompts, ExtractionConfig(batch_size=8), progress=False, tokenizer=tokenizer)
    last = np.asarray(ex["values"][:, -1]).reshape(len(prompts), -1)
    manifold = value_manifold(last, ex["next_entropy_bits"], n_boot=10, n_null=5, seed=0)
    focus = attention_focusing(ex["attn_entropy_bits"], ex["n_visible_keys"], n_boot=10, seed=0)
    return {"pc1": manifold.pc1, "pc12": manifold.pc12, "orth_mean": key_orthogonality(key_weight_stack(model)).mean,
            "focusing": focus.focusing, "next_entropy_bits_mean": float(np.mean(ex["next_entropy_bits"]))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", nargs="+", default=["smollm2-135m", "gemma3-270m"])
    parser.add_argument("--k", type=int, default=3, help="perturbed copies")
    parser.add_argument("--u", type=int, default=3, help="untrained copies")
    parser.add_argument("--n", type=int, default=8, help="prompts per corpus source (5 sources)")
    args = parser.parse_args()
    torch.set_num_threads(2)
    by_source: dict[str, list] = {}
    for p in load_corpus("mixed"):
        by_source.setdefault(p.source, []).append(p)
    prompts = [p for group in by_source.values() for p in group[: args.n]]
    out = Path(__file__).parent / "results" / f"quantisation_bound-{datetime.date.today()}.json"
    report = {}
    for alias in args.models:
        start = time.time()
        loaded = load_model(alias, device="cpu")
        base = headline(loaded.model, loaded.tokenizer, prompts)
        perturbed = []
        for seed in range(1, args.k + 1):
            noisy = copy.deepcopy(loaded.model)
            perturb_like_quantisation(noisy, seed=seed)
            perturbed.append(headline(noisy, loaded.tokenizer, prompts))
            del noisy
        untrained = []
        for seed in range(1000, 1000 + args.u):
            torch.manual_seed(seed)
            fresh = transformers.AutoModelForCausalLM.from_config(copy.deepcopy(loaded.model.config),
                                                                  dtype=torch.float32).eval()
            untrained.append(headline(fresh, loaded.tokenizer, prompts))
            del fresh
        rows = {}
        for key in HEADLINES:
            moves = [abs(p[key] - base[key]) for p in perturbed]
            copies = [u[key] for u in untrained]
            distance = abs(base[key] - float(np.mean(copies)))
            rows[key] = {"model": base[key], "max_move_under_quantisation": max(moves), "copies": copies,
                         "distance_from_copies": distance, "resolvable": max(moves) < distance}
        report[alias] = {"n_prompts": len(prompts), "k_perturbed": args.k, "u_untrained": args.u, "rows": rows,
                         "seconds": round(time.time() - start)}
        print(f"{alias} ({len(prompts)} prompts, {args.k} perturbed, {args.u} untrained, {time.time() - start:.0f} s)")
        print(f"  {'headline':24s} {'model':>9s} {'max move':>9s} {'copies mean':>11s} {'distance':>9s}  resolvable")
        for key, row in rows.items():
            print(f"  {key:24s} {row['model']:9.4f} {row['max_move_under_quantisation']:9.4f} "
                  f"{np.mean(row['copies']):11.4f} {row['distance_from_copies']:9.4f}  {row['resolvable']}", flush=True)
        out.parent.mkdir(exist_ok=True)
        out.write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
