"""The `domain` suite: the mixed-domain set against each domain-restricted set (METHODS.md 2, 6).

Every set goes through the same pipeline as the geometry suite (a stratified sample by prompt
length, or with --sample entropy by the model's next-token entropy, then extracted), and the
last-layer value manifold is compared: PC1, PC1+PC2
and their gain over the mixed set, with a bootstrap CI of the gain (the two sets resampled
independently). Paper III reads a higher PC1+PC2 under restriction as "one inference mode";
restriction also narrows vocabulary and syntax, so the gain does not isolate that by itself.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from geomprobe.analysis.estimate import estimate
from geomprobe.analysis.pca import explained_variance_ratios
from geomprobe.analysis.value_manifold import value_manifold
from geomprobe.console import table_console
from geomprobe.errors import ConfigError
from geomprobe.extraction import extract
from geomprobe.rundir import atomic_write_json

from ..base import NullOptions, limited, option, register_suite, windtunnel_task
from ..sampling import ManifoldOptions, readout_matrix, shares_sample, stratified_prompts
from .results import SCHEMA_VERSION, DomainResults


@dataclass
class DomainConfig(ManifoldOptions, NullOptions):
    """METHODS.md sections 2 and 6: the mixed corpus against domain-restricted ones."""

    domains: tuple[str, ...] = option(("math", "code", "philosophy"), "restricted corpora to compare with --corpus")


def unsupported(loaded, run_config) -> str | None:
    if windtunnel_task(loaded)[0] is not None:
        return ("the domain suite compares natural-language corpora; a wind-tunnel model only reads its own task: "
                "run --suite geometry on it instead")
    if run_config.prompts:
        return "the domain suite uses the built-in corpora (--corpus and --domains), not --prompts"
    return None

CAVEAT = ("restricting prompts to one domain also narrows vocabulary and syntax, so a higher PC1+PC2 "
          "does not by itself isolate a single inference mode")


def _bootstrap_gain(mixed: np.ndarray, restricted: np.ndarray, n_boot: int, seed: int) -> dict:
    """Bootstrap 95% CIs of (restricted - mixed) for PC1 and PC1+PC2, rows resampled
    independently in each set ([None, None] when no resample could be scored)."""
    rng = np.random.default_rng(seed)
    gains = {"pc1": [], "pc12": []}
    for _ in range(n_boot):
        a = mixed[rng.integers(0, len(mixed), len(mixed))]
        b = restricted[rng.integers(0, len(restricted), len(restricted))]
        try:
            ra, rb = explained_variance_ratios(a), explained_variance_ratios(b)
        except ValueError:
            continue
        gains["pc1"].append(rb[0] - ra[0])
        gains["pc12"].append(rb[:2].sum() - ra[:2].sum())
    return {name: [float(np.percentile(v, 2.5)), float(np.percentile(v, 97.5))] if v else [None, None]
            for name, v in gains.items()}


def gain_over_mixed(mixed: dict, restricted: dict, mixed_matrix: np.ndarray, restricted_matrix: np.ndarray,
                    n_boot: int, seed: int) -> dict:
    """{"pc1", "pc12"}: Estimates of the restricted set's explained-variance share minus the mixed
    set's (mixed, restricted: the sets' value_manifold summaries; the matrices: their [n, p] vectors)."""
    cis = _bootstrap_gain(mixed_matrix, restricted_matrix, n_boot, seed)
    method = (f"restricted minus mixed explained-variance share, percentile bootstrap 95% CI ({n_boot} resamples, "
              f"the prompts of each set resampled independently)")
    note = f"n counts the restricted set's prompts; the mixed set has {len(mixed_matrix)}"
    return {name: estimate(restricted[name] - mixed[name], cis[name], method, len(restricted_matrix), note=note)
            for name in ("pc1", "pc12")}


def run_domain_suite(ctx) -> dict:
    from geomprobe.corpora import load_corpus

    config, seed = ctx.options, ctx.seed
    why = unsupported(ctx.loaded, ctx.run)
    if why:
        raise ConfigError(why)
    work = ctx.work
    sets = {"mixed": config.corpus, **{name: name for name in config.domains}}
    matrices, summary, chosen = {}, {}, {}
    for label, corpus in sets.items():
        candidates = limited(load_corpus(corpus), ctx.run)
        prompts, sample = stratified_prompts(ctx, candidates, work, label=label)
        atomic_write_json(work / f"sample-{label}.json", {"corpus": corpus, **sample})
        ctx.record_prompts(prompts, f"corpus:{corpus}", key=f"prompts_{label}")
        chosen[label] = prompts
        n_layers = ctx.loaded.adapter.shape.n_layers
        extraction = extract(ctx.loaded, prompts, ctx.extraction_config(layers=[n_layers - 1]),
                             out_dir=work / f"extraction-{label}", progress=ctx.progress, label=f"domain: {label}")
        matrix = readout_matrix(extraction, config.readout)
        matrices[label] = matrix[:, -1].reshape(len(matrix), -1)
        manifold = value_manifold(matrices[label], entropy_bits=extraction.arrays.get("next_entropy_bits"),
                                  n_boot=config.n_boot, n_null=config.n_null, seed=seed, ci=config.manifold_ci)
        summary[label] = {"corpus": corpus, "n": len(prompts), "stratified": sample["stratified"],
                          **manifold.to_dict()}
    for label in config.domains:
        mixed, restricted = summary["mixed"], summary[label]
        summary[label]["gain_over_mixed"] = gain_over_mixed(mixed, restricted, matrices["mixed"], matrices[label],
                                                            max(200, config.n_boot // 2), seed)
    nulls = null_gains(ctx, sets, matrices, chosen)
    if nulls is not None:
        for label in config.domains:
            summary[label]["gain_vs_untrained"] = nulls["comparisons"][f"pc12_gain_{label}"]
    return ctx.write_results({"readout": config.readout, "layer": ctx.loaded.adapter.shape.n_layers - 1,
                                 "sets": summary, "untrained_null": nulls, "caveat": CAVEAT})


def null_gains(ctx, sets: dict, matrices: dict, chosen: dict) -> dict | None:
    """Each set on the untrained null models (geomprobe.nulls), each copy reading the model's sample
    of every corpus (`chosen`: drawn without any model, --sample length) or drawing its own by its
    own entropy (--sample entropy, as the model's samples were drawn by the model's),
    and each restricted set's PC1+PC2 gain over the mixed set against the same gain of the
    untrained copies (geomprobe.analysis.null_comparison)."""
    from geomprobe.analysis.null_comparison import compare_to_nulls, not_tested, share_gain
    from geomprobe.corpora import load_corpus

    config = ctx.options
    specs = ctx.null_specs()
    if not specs:
        return None
    last = ctx.loaded.adapter.shape.n_layers - 1
    null_matrices, per_null = [], []

    def stacked_for(label, sets):
        return np.r_[np.c_[sets["mixed"], np.zeros(len(sets["mixed"]))], np.c_[sets[label], np.ones(len(sets[label]))]]

    def gain_or_none(label, sets):
        try:
            return share_gain(2)(stacked_for(label, sets))
        except ValueError:
            return None

    tracker = ctx.sequential(specs)  # copies stop once no domain's decision can change
    for label in config.domains:
        tracker.watch(label, gain_or_none(label, matrices))
    for index, (spec, copy) in enumerate(ctx.nulls(specs)):
        if tracker.settled():
            break
        rows, sizes = {}, {}
        work = ctx.work / "nulls" / spec.name
        for label, corpus in sets.items():
            if shares_sample(config):  # drawn without any model: the copies read the model's prompts
                prompts = chosen[label]
            else:
                prompts, sample = stratified_prompts(ctx, limited(load_corpus(corpus), ctx.run), work, label=label, loaded=copy,
                                                     who=spec.label)
                atomic_write_json(work / f"sample-{label}.json", {"corpus": corpus, **sample})
            extraction = extract(copy, prompts, ctx.extraction_config(layers=[last]),
                                 out_dir=work / f"extraction-{label}", progress=ctx.progress,
                                 label=f"domain: {spec.label}, {label}")
            matrix = readout_matrix(extraction, config.readout)
            rows[label], sizes[label] = matrix[:, -1].reshape(len(matrix), -1), len(prompts)
        null_matrices.append(rows)
        per_null.append({**spec.to_dict(), "n_prompts": sizes})
        for label in config.domains:
            tracker.add(label, gain_or_none(label, rows))
        if tracker.settled() and ctx.progress:
            print(f"domain: copy {index + 1}/{len(specs)}: no decision can change now; the other copies are not "
                  "built (--no-null-stop builds them all)", flush=True)
    comparisons = {}
    for label in config.domains:
        model = stacked_for(label, matrices)
        try:
            comparisons[f"pc12_gain_{label}"] = compare_to_nulls(
                share_gain(2), model, [stacked_for(label, rows) for rows in null_matrices], unit="prompts of both sets",
                name=f"PC1+PC2 gain of {label} over mixed", sequential=tracker.record(label))
        except ValueError as error:
            comparisons[f"pc12_gain_{label}"] = not_tested(f"PC1+PC2 gain of {label} over mixed", str(error))
    return {"spec": config.null, "description": ", ".join(s.name for s in specs), "models": per_null,
            "comparisons": comparisons, "copies": tracker.summary(),
            "note": "every set on untrained copies, " + ("reading the model's samples (drawn without any model)"
                                                          if shares_sample(config) else
                                                          "each drawing its own stratified samples from the same "
                                                          "corpora") + "; a "
                    "gain means one inference mode only if it exceeds the gain an untrained network shows from the "
                    "narrower vocabulary alone"}


def _signed_ci(entry: dict) -> str:
    low, high = entry["ci95"]
    return f"{entry['value']:+.3f}" + ("" if low is None else f" [{low:+.3f}, {high:+.3f}]")


def print_summary(results: dict) -> None:
    from rich.table import Table

    table = Table(title=f"domain restriction: {results['model']}, last-layer {results['readout']}")
    for column in ("set", "n", "PC1", "PC1+PC2", "95% CI", "shuffle null", "gain PC1+PC2 (95% CI)"):
        table.add_column(column, justify="right")
    for label, row in results["sets"].items():
        gain = row.get("gain_over_mixed")
        table.add_row(label, str(row["n"]), f"{row['pc1']:.3f}", f"{row['pc12']:.3f}",
                      f"[{row['pc12_ci95'][0]:.3f}, {row['pc12_ci95'][1]:.3f}]",
                      f"{row['shuffle_null']['pc12']['median']:.3f}",
                      "" if gain is None else _signed_ci(gain["pc12"]))
    console = table_console()
    console.print(table)
    from geomprobe.analysis.null_comparison import comparison_text

    for label, row in results["sets"].items():
        cmp = row.get("gain_vs_untrained")
        if cmp:
            console.print(f"{label}: PC1+PC2 gain over mixed, {comparison_text(cmp, '+.3f')}", markup=False)
    console.print(f"caveat: {results['caveat']}")

register_suite("domain", DomainConfig, run_domain_suite,
               "value manifold of the mixed corpus against domain-restricted corpora (PC1+PC2 gain)",
               unsupported=unsupported,
               schema=DomainResults, schema_version=SCHEMA_VERSION, summary=print_summary)
