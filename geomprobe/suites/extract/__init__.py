"""The `extract` suite: METHODS.md section 1's arrays for every prompt, plus a per-layer summary.

<run>/extraction/*.npy hold the arrays; <run>/extract/results.json holds per-layer means of the
final-token attention entropy (bits, and normalised by log2 of the visible keys; flat fields
with their ci95, geomprobe.results.LayerEntropy) and the mean next-token entropy (an Estimate
{"value", "ci95", "method", "n"}), each with a 95% bootstrap interval over prompts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from geomprobe.analysis.bootstrap import bootstrap_mean_estimate, bootstrap_mean_intervals
from geomprobe.analysis.estimate import estimate
from geomprobe.console import table_console
from geomprobe.extraction import extract

from ..base import SuiteConfig, register_suite, suite_prompts
from .results import SCHEMA_VERSION, ExtractResults


@dataclass
class ExtractConfig(SuiteConfig):
    """The extract suite has no options of its own: RunConfig says what to extract."""


def _mean_cis(columns, n_boot: int, seed: int) -> list[tuple[float, float | None, float | None]]:
    """(mean, low, high) of each column (paired: one draw of resampled prompts for all, as
    bootstrap_mean_ci of each with this seed); one prompt has a mean and no interval."""
    if len(columns[0]) < 2:
        return [(float(np.mean(samples)), None, None) for samples in columns]
    return [entry[:3] for entry in bootstrap_mean_intervals(columns, n_boot=n_boot, seed=seed)]


def summarise(extraction, n_boot: int = 1000) -> dict:
    entropy = extraction["attn_entropy_bits"]  # [n, L, H]
    visible = extraction["n_visible_keys"]  # [n, L]
    head_mean = entropy.mean(axis=2)  # per prompt and layer: mean over query heads
    norm = head_mean / np.log2(np.maximum(visible, 2))
    layers = []
    for column, layer in enumerate(extraction.layers):  # flat, as geomprobe.results.LayerEntropy
        (mean, low, high), (nmean, nlow, nhigh) = _mean_cis([head_mean[:, column], norm[:, column]], n_boot, column)
        layers.append({"layer": layer, "attn_entropy_bits": mean, "ci95": [low, high],
                       "attn_entropy_normalised": nmean, "normalised_ci95": [nlow, nhigh]})
    results = {"n_prompts": len(extraction.prompt_ids), "layers": layers,
               "n_tokens": {"min": int(extraction["n_tokens"].min()), "max": int(extraction["n_tokens"].max())}}
    if "next_entropy_bits" in extraction.arrays:
        values = extraction["next_entropy_bits"]
        results["next_entropy_bits"] = bootstrap_mean_estimate(values, n_boot) if len(values) > 1 else estimate(
            float(np.mean(values)), [None, None], "the one prompt's value (no interval from one prompt)", len(values))
    return results


def run_extract_suite(ctx) -> dict:
    prompts, source = suite_prompts(ctx)
    ctx.record_prompts(prompts, source)
    extraction = extract(ctx.loaded, prompts, ctx.extraction_config(), out_dir=ctx.run_dir.path / "extraction",
                         progress=ctx.progress, label="extract")
    return ctx.write_results(summarise(extraction, n_boot=ctx.options.n_boot))


def print_summary(results: dict) -> None:
    from rich.table import Table

    table = Table(title=f"final-token attention entropy, {results['n_prompts']} prompts (mean over heads, 95% CI)")
    for column in ("layer", "bits", "95% CI", "normalised"):
        table.add_column(column, justify="right")
    for row in results["layers"]:
        table.add_row(str(row["layer"]), f"{row['attn_entropy_bits']:.3f}",
                      _interval(row["ci95"]), f"{row['attn_entropy_normalised']:.3f}")
    console = table_console()
    console.print(table)
    if "next_entropy_bits" in results:
        ne = results["next_entropy_bits"]
        console.print(f"next-token entropy: {ne['value']:.3f} bits {_interval(ne['ci95'])}")


def _interval(ci) -> str:
    return "-" if ci is None or ci[0] is None else f"[{ci[0]:.3f}, {ci[1]:.3f}]"

register_suite("extract", ExtractConfig, run_extract_suite,
               "METHODS.md section 1's arrays for every prompt; per-layer final-token attention entropy",
               schema=ExtractResults, schema_version=SCHEMA_VERSION, summary=print_summary)
