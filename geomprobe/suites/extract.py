"""The `extract` suite: PROTOCOL.md section 1's arrays for every prompt, plus a per-layer summary.

<run>/extraction/*.npy hold the arrays; <run>/extract/results.json holds per-layer means of the
final-token attention entropy (bits, and normalised by log2 of the visible keys) and the mean
next-token entropy, each with a 95% bootstrap interval over prompts.
"""

from __future__ import annotations

import numpy as np

from geomprobe.analysis.bootstrap import bootstrap_mean_ci
from geomprobe.extraction import extract
from geomprobe.rundir import atomic_write_json
from geomprobe.console import table_console


def summarise(extraction) -> dict:
    entropy = extraction["attn_entropy_bits"]  # [n, L, H]
    visible = extraction["n_visible_keys"]  # [n, L]
    head_mean = entropy.mean(axis=2)  # per prompt and layer: mean over query heads
    norm = head_mean / np.log2(np.maximum(visible, 2))
    layers = []
    for column, layer in enumerate(extraction.layers):
        mean, low, high = bootstrap_mean_ci(head_mean[:, column], seed=column)
        nmean, nlow, nhigh = bootstrap_mean_ci(norm[:, column], seed=column)
        layers.append({"layer": layer, "attn_entropy_bits": mean, "ci95": [low, high],
                       "attn_entropy_normalised": nmean, "normalised_ci95": [nlow, nhigh]})
    results = {"n_prompts": len(extraction.prompt_ids), "layers": layers,
               "n_tokens": {"min": int(extraction["n_tokens"].min()), "max": int(extraction["n_tokens"].max())}}
    if "next_entropy_bits" in extraction.arrays:
        mean, low, high = bootstrap_mean_ci(extraction["next_entropy_bits"])
        results["next_entropy_bits"] = {"mean": mean, "ci95": [low, high]}
    return results


def run_extract_suite(ctx) -> dict:
    from geomprobe.runner import default_prompts

    prompts, source = (ctx.prompts, ctx.config.prompts) if ctx.prompts else default_prompts(ctx.loaded, ctx.config.seed)
    ctx.record_prompts(prompts, source)
    extraction = extract(ctx.loaded, prompts, ctx.extraction_config(), out_dir=ctx.run_dir.path / "extraction",
                         progress=ctx.progress)
    results = summarise(extraction)
    atomic_write_json(ctx.run_dir.path / "extract" / "results.json", results)
    if ctx.progress:
        print_summary(results)
    return results


def print_summary(results: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"final-token attention entropy, {results['n_prompts']} prompts (mean over heads, 95% CI)")
    for column in ("layer", "bits", "95% CI", "normalised"):
        table.add_column(column, justify="right")
    for row in results["layers"]:
        table.add_row(str(row["layer"]), f"{row['attn_entropy_bits']:.3f}",
                      f"[{row['ci95'][0]:.3f}, {row['ci95'][1]:.3f}]", f"{row['attn_entropy_normalised']:.3f}")
    console = table_console()
    console.print(table)
    if "next_entropy_bits" in results:
        ne = results["next_entropy_bits"]
        console.print(f"next-token entropy: {ne['mean']:.3f} bits [{ne['ci95'][0]:.3f}, {ne['ci95'][1]:.3f}]")
