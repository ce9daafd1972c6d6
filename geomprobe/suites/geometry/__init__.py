"""The `geometry` suite: the three static/dynamic signatures and the verdict (METHODS.md 2-6).

1. Candidates: --prompts, else the `mixed` corpus (a wind-tunnel model: 1,000 sequences of its
   own task).
2. Stratified sample: --n-per-quintile draws from each quintile (default 15, so 75 prompts) of
   the prompt length in tokens (--sample length, the default: no model is run, and the untrained
   copies read the same prompts) or of the model's next-token entropy (--sample entropy, paper
   III: one forward pass per candidate, kept in <run>/geometry/candidates/, and each copy scores
   the candidates and draws its own sample). The chosen ids are saved in <run>/geometry/sample.json.
3. Extraction of every layer for the chosen prompts (<run>/geometry/extraction/).
4. Value manifold (last layer, and a per-layer profile), key orthogonality with computed
   baselines (analytic and empirical Gaussian, fresh initialisation, Pythia's step0), attention
   focusing, and the verdict. Everything goes to <run>/geometry/results.json.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from geomprobe.analysis.focusing import attention_focusing
from geomprobe.analysis.key_orthogonality import key_orthogonality, token_key_orth
from geomprobe.analysis.value_manifold import value_manifold
from geomprobe.analysis.verdict import KEYS_MARGIN, VerdictThresholds, verdict
from geomprobe.console import table_console
from geomprobe.errors import ConfigError
from geomprobe.extraction import extract
from geomprobe.rundir import atomic_write_json

from ..base import Definitions, NullOptions, definitions_option, option, register_suite
from ..sampling import (  # noqa: F401  (re-exported: the suite's API before the domain suite shared them)
    N_WINDTUNNEL_CANDIDATES,
    ManifoldOptions,
    _stratified,
    balance_final_tokens,
    candidate_prompts,
    length_stratified,
    readout_matrix,
    shares_sample,
    stratified_prompts,
)
from .results import SCHEMA_VERSION, GeometryResults


@dataclass
class GeometryConfig(ManifoldOptions, NullOptions):
    """METHODS.md sections 2-6: value manifold, key orthogonality, attention focusing, verdict."""

    fold_ln: bool = option(False, "key orthogonality on W_K with the preceding norm's scale folded in")
    token_keys: bool = option(False, "also the papers' token-key mode (E W_K for sampled tokens)")
    init_seeds: int = option(3, "freshly initialised copies for the untrained baselines", min=0)
    step0: str = option("auto", "untrained-checkpoint baseline: auto (Pythia's step0) | off | a model spec")
    pc_threshold: float = option(0.30, "verdict: value PC1 needed", min=0, max=1)
    orth_threshold: float = option(0.20, "verdict: mean |cos| of keys below which a layer counts as orthogonal",
                                   min=0, max=1)
    orth_layer_fraction: float = option(0.50, "verdict: share of layers that must be orthogonal", min=0, max=1)
    focusing_threshold: float = option(0.30, "verdict: attention focusing needed", min=-1, max=1)
    keys_margin: float = option(KEYS_MARGIN, "verdict: keys count as near-orthogonal when their mean |cos| is at most "
                                             "this times the untrained copies' (the default: the largest ratio of the "
                                             "shipped wind tunnels, which track an exact posterior; METHODS.md 5)",
                                min=1)
    definitions: Definitions = definitions_option()

    def readouts(self) -> tuple[str, ...]:
        return (self.readout,) if self.definitions == "geomprobe" else tuple(dict.fromkeys((self.readout, "hidden")))


def profile_null_draws(n_null: int, last: bool) -> int:
    """Null draws at one layer of the per-layer profile (METHODS.md 2.6): a fifth of --n-null (at
    least 20) at the last layer, whose shuffle-null median the profile figure draws; none at the
    earlier layers, where no verdict reads them and the untrained copies' PC1 is drawn instead."""
    return max(20, n_null // 5) if last else 0


def entropy_of(extraction) -> np.ndarray | None:
    return extraction.arrays.get("next_entropy_bits")


def manifold_results(extraction, readout: str, config, seed: int) -> dict:
    """Last-layer value manifold with CIs and nulls, and the per-layer profile."""
    matrix = readout_matrix(extraction, readout)
    entropy = entropy_of(extraction)
    try:
        last = value_manifold(matrix[:, -1].reshape(len(matrix), -1), entropy_bits=entropy, n_boot=config.n_boot,
                              n_null=config.n_null, seed=seed, ci=config.manifold_ci)
    except ValueError as error:
        raise ConfigError(f"value manifold at layer {extraction.layers[-1]}: {error}") from None
    per_layer = []
    for column, layer in enumerate(extraction.layers):
        try:
            profile = value_manifold(matrix[:, column].reshape(len(matrix), -1), entropy_bits=entropy,
                                     n_boot=max(100, config.n_boot // 5),
                                     n_null=profile_null_draws(config.n_null, column == len(extraction.layers) - 1),
                                     seed=seed, ci=config.manifold_ci)
            per_layer.append({"layer": layer, **profile.to_dict(compact=True)})
        except ValueError as error:  # e.g. layer 0 values of prompts that all end in the same token
            per_layer.append({"layer": layer, "pc1": None, "pc12": None, "pr": None, "note": str(error)})
    out = {"readout": readout, "layer": extraction.layers[-1], **last.to_dict(), "per_layer": per_layer}
    if entropy is not None:
        out["rho_pc1_entropy_given_length"] = _length_controlled_rho(matrix[:, -1].reshape(len(matrix), -1), entropy,
                                                                     extraction["n_tokens"], config.n_boot, seed)
    return out


def _length_controlled_rho(rows, entropy, n_tokens, n_boot: int, seed: int) -> dict:
    """Spearman partial rho(PC1 score, next-token entropy) given the prompt length in tokens: long
    prompts differ from short ones in any network, and entropy falls with context."""
    from geomprobe.analysis.confounds import rank_partial_correlation
    from geomprobe.analysis.pca import standardise

    z, _ = standardise(rows)
    scores = z @ np.linalg.svd(z, full_matrices=False)[2][0]
    entry = rank_partial_correlation(scores, entropy, covariates=[np.asarray(n_tokens, dtype=np.float64)],
                                     names=["prompt length in tokens"], n_boot=n_boot, seed=seed)
    entry["note"] = "PC1's sign is arbitrary: read the magnitude beside |rho(PC1, entropy)|"
    return entry


def key_results(ctx) -> dict:
    """Key orthogonality with every baseline this model allows (METHODS.md section 3)."""
    from geomprobe.weights import init_key_weights, key_weight_stack, step0_key_weights, step0_source, token_keys

    config, seed = ctx.options, ctx.seed
    weights = key_weight_stack(ctx.loaded, fold_ln=config.fold_ln)
    baselines, notes = {}, {}
    init = [init_key_weights(ctx.loaded, seed=seed + s) for s in range(config.init_seeds)]
    if init:
        baselines["init"] = init
    step0 = None if config.step0 == "off" else (step0_source(ctx.loaded) if config.step0 == "auto" else config.step0)
    if step0 is not None:
        try:
            baselines["step0"] = step0_key_weights(ctx.loaded, step0)
        except Exception as error:  # an unavailable checkpoint must not sink the suite: say why
            notes["step0"] = f"{step0} unavailable: {str(error).splitlines()[0]}"
    elif config.step0 == "auto":
        notes["step0"] = "this model family publishes no untrained checkpoint"
    result = key_orthogonality(weights, threshold=config.orth_threshold, baselines=baselines,
                               ln_folded=config.fold_ln, seed=seed).to_dict()
    result.update(fold_ln=config.fold_ln, init_seeds=config.init_seeds, step0_spec=step0, notes=notes,
                  init_note="fresh initialisation by transformers from the model's config; every layer's W_K is "
                            "initialised alike, so the baseline is measured on 2 layers per seed")
    if config.token_keys:
        result["token_keys"] = [token_key_orth(keys).to_dict() for keys in token_keys(ctx.loaded, seed=seed)]
    return result


def thresholds_of(config) -> VerdictThresholds:
    return VerdictThresholds(pc_threshold=config.pc_threshold, orth_threshold=config.orth_threshold,
                             orth_layer_fraction=config.orth_layer_fraction,
                             focusing_threshold=config.focusing_threshold,
                             keys_margin=getattr(config, "keys_margin", VerdictThresholds.keys_margin))


def null_results(ctx, candidates, extraction, key_layer_mean, model_prompts=None) -> dict | None:
    """The same pipeline on each untrained null model (geomprobe.nulls), and the model against
    them: PC1 and PC1+PC2 of the last-layer readout, mean key |cos| over layers, attention
    focusing (geomprobe.analysis.null_comparison). With --sample length (or every candidate) the
    copies read the model's prompts (`model_prompts`), drawn without any model; with --sample
    entropy each null draws its own stratified sample from the same candidates by its own
    next-token entropy, as the model's was drawn by the model's: a sample chosen by the model's
    entropy and reused for the nulls favours the model (METHODS.md section 5.1). None with --null off."""
    from geomprobe.analysis.null_comparison import compare_to_nulls, explained_share, focusing_of, mean_of, not_tested
    from geomprobe.analysis.pca import explained_variance_ratios
    from geomprobe.weights import key_weight_stack

    config, seed = ctx.options, ctx.seed
    specs = ctx.null_specs()
    if not specs:
        return None
    model_rows = readout_matrix(extraction, config.readout)[:, -1]
    rows, entropies, key_means, per_null = [], [], [], []
    # copies stop their forwards once pc1, pc12 and focusing can no longer be decided otherwise; the
    # keys (weights only, and the non-inferiority margin reads every copy) go on to the last copy
    shared = shares_sample(config) and model_prompts is not None
    tracker = ctx.sequential(specs)
    for name, statistic, model in (("pc1", explained_share(1), model_rows), ("pc12", explained_share(2), model_rows),
                                   ("focusing", focusing_of, extraction["attn_entropy_bits"])):
        try:
            tracker.watch(name, statistic(model))
        except ValueError:
            tracker.watch(name, None)
    for index, (spec, copy) in enumerate(ctx.nulls(specs)):
        keys = key_orthogonality(key_weight_stack(copy, fold_ln=config.fold_ln), threshold=config.orth_threshold,
                                 ln_folded=config.fold_ln, seed=seed).to_dict()
        key_means.append(np.asarray(keys["layer_mean"], dtype=np.float64))
        if tracker.settled():  # the weights' statistics only
            per_null.append({**spec.to_dict(), "key_layer_mean": keys["layer_mean"],
                             "key_fraction_below": keys["fraction_below"],
                             "note": "weights only: the forwards stopped once no rank decision could change"})
            continue
        work = ctx.work / "nulls" / spec.name
        if shared:
            prompts, sample_text = model_prompts, "the model's sample (drawn without any model: --sample length)"
        else:
            prompts, sample = stratified_prompts(ctx, candidates, work, label="", loaded=copy, who=spec.label)
            atomic_write_json(work / "sample.json", sample)
            sample_text = ("sample.json (its own stratified draw from the candidates)" if sample.get("stratified")
                           else f"sample.json ({sample.get('why', 'not stratified')})")
        null_extraction = extract(copy, prompts, ctx.extraction_config(layers=None), out_dir=work / "extraction",
                                  progress=ctx.progress, label=f"geometry: {spec.label}")
        stack = readout_matrix(null_extraction, config.readout)
        matrix = stack[:, -1]
        rows.append(matrix)
        entropies.append(null_extraction["attn_entropy_bits"])
        entry = {**spec.to_dict(), "pc1": None, "pc12": None, "focusing": None, "n_prompts": len(prompts),
                 "sample": sample_text,
                 "n_prompts_shared_with_model": len({p.id for p in prompts} & set(extraction.prompt_ids)),
                 "key_layer_mean": keys["layer_mean"], "key_fraction_below": keys["fraction_below"],
                 "hbar_bits": [float(v) for v in np.nanmean(null_extraction["attn_entropy_bits"].mean(axis=2), axis=0)]}
        for name, statistic in (("pc1", explained_share(1)), ("pc12", explained_share(2)), ("focusing", focusing_of)):
            try:
                entry[name] = statistic(matrix if name != "focusing" else null_extraction["attn_entropy_bits"])
            except ValueError as error:  # AnalysisError included: e.g. no column varies
                entry[f"{name}_note"] = str(error)
        entry["per_layer"] = []  # PC1 and PC1+PC2 at each extracted layer, drawn beside the model's profile
        for column, layer in enumerate(null_extraction.layers):
            try:  # explained_share(1) and (2) from one spectrum
                ratios = explained_variance_ratios(stack[:, column].reshape(len(stack), -1))
                entry["per_layer"].append({"layer": int(layer), "pc1": float(np.sum(ratios[:1])),
                                           "pc12": float(np.sum(ratios[:2]))})
            except ValueError:
                entry["per_layer"].append({"layer": int(layer), "pc1": None, "pc12": None})
        if "next_entropy_bits" in null_extraction.arrays:
            entry["next_entropy_bits_mean"] = float(np.mean(null_extraction["next_entropy_bits"]))
        per_null.append(entry)
        for name in ("pc1", "pc12", "focusing"):
            tracker.add(name, entry[name])
        if tracker.settled() and ctx.progress:
            print(f"geometry: copy {index + 1}/{len(specs)}: no rank decision can change now; the other copies give "
                  "their keys only (--no-null-stop measures them all)", flush=True)
    comparisons = {}
    plan = [("pc1", explained_share(1), model_rows, rows, True, "prompts", "value manifold PC1"),
            ("pc12", explained_share(2), model_rows, rows, True, "prompts", "value manifold PC1+PC2"),
            ("keys", mean_of, np.asarray(key_layer_mean, dtype=np.float64), key_means, False, "layers",
             "mean off-diagonal |cos| of W_K over layers (lower: more orthogonal)"),
            ("focusing", focusing_of, extraction["attn_entropy_bits"], entropies, True, "prompts",
             "attention focusing 1 - H(L-1)/H(0)")]
    for name, statistic, model, nulls, higher, unit, label in plan:
        try:
            comparisons[name] = compare_to_nulls(statistic, model, nulls, higher_is_better=higher, unit=unit, name=label,
                                                 sequential=tracker.record(name))
        except ValueError as error:
            comparisons[name] = not_tested(label, str(error))
    description = ", ".join(spec.name for spec in specs)
    return {"spec": config.null, "description": description, "models": per_null, "comparisons": comparisons,
            "copies": tracker.summary(),
            "note": "each null is the same architecture untrained, run through the same pipeline: "
                    + ("the model's own prompts (a sample drawn without any model)" if shared else
                       "its own stratified sample from the same candidates (by its own next-token entropy)")
                    + ", the same extraction; a criterion holds only when the model's value ranks above the copies' "
                      "(keys: within a margin of them), METHODS.md section 5.1"}


def final_token_counts(tokenizer, prompts, max_tokens) -> dict:
    """How many distinct final tokens the sample ends in, and the commonest: prompts that end in the
    same token share its layer-0 value vector, which correlates value columns in any network."""
    from collections import Counter

    from geomprobe.extraction import tokenize

    finals = Counter(ids[-1] for ids in tokenize(tokenizer, prompts, max_tokens) if ids)
    common = [{"token": tokenizer.convert_ids_to_tokens(int(token)), "n": n} for token, n in finals.most_common(5)]
    return {"n_prompts": len(prompts), "n_distinct": len(finals), "most_common": common}


def geometry_results(ctx, extraction, prompts=None, candidates=None) -> dict:
    """candidates: the pool the sample was drawn from (each untrained null draws its own sample
    from it); None: the prompts themselves."""
    config = ctx.options
    manifold = manifold_results(extraction, config.readout, config, ctx.seed)
    if prompts is not None:
        manifold["final_tokens"] = final_token_counts(ctx.loaded.tokenizer, prompts, ctx.run.max_tokens)
    keys = key_results(ctx)
    focusing = attention_focusing(extraction["attn_entropy_bits"], extraction["n_visible_keys"],
                                  n_boot=config.n_boot, seed=ctx.seed).to_dict()
    nulls = (null_results(ctx, candidates if candidates is not None else prompts, extraction, keys["layer_mean"],
                          model_prompts=prompts) if prompts is not None else None)
    judged = verdict(manifold["pc1"], manifold["pc12"], manifold["above_shuffle_null"], keys["fraction_below"],
                     focusing["focusing"], thresholds=thresholds_of(config), untrained=(nulls or {}).get("comparisons"),
                     null=None if nulls is None else nulls["description"])
    out = {"value_manifold": manifold, "key_orthogonality": keys, "attention_focusing": focusing,
           "untrained_null": nulls, "verdict": judged.to_dict(), "definitions": getattr(config, "definitions", "geomprobe")}
    if out["definitions"] != "geomprobe":
        as_released = out["definitions"] == "paper-code-as-released"
        out["paper_code"] = paper_code_results(ctx, extraction, manifold, keys, focusing, prompts, as_released)
        if as_released:
            out["paper_code"].update(definitions="paper-code-as-released", note="AS RELEASED: the row 'key "
                                     "orthogonality, final-token keys as released' reads the released code's key "
                                     "split, which is wrong for GPT-NeoX (METHODS.md section 11); the other geometry "
                                     "rows read no split (post-norm hidden states and embeddings), so they equal "
                                     "paper-code's; " + out["paper_code"]["note"])
    return out


def paper_code_results(ctx, extraction, manifold, keys, focusing, prompts, as_released: bool = False) -> dict:
    """The side-by-side table (geomprobe.paper_code.geometry_side_by_side) on this sample; with
    `as_released`, plus the final-token keys of the released code's split (one more forward)."""
    from geomprobe.paper_code import geometry_side_by_side

    if "hidden" not in extraction.arrays:
        raise ConfigError("--definitions paper-code reads the final hidden state: the extraction has no 'hidden' "
                          "readout (rerun with --overwrite)")
    if not ctx.loaded.adapter.has_next_token:
        raise ConfigError(f"--definitions paper-code correlates PC1 with the next-token entropy: {ctx.loaded.spec} has "
                          "no next-token head")
    from geomprobe.paper_code import final_token_keys

    embeddings = ctx.loaded.model.get_input_embeddings().weight.detach().float().cpu().numpy()
    vocab = getattr(ctx.loaded.tokenizer, "vocab_size", None)
    adapter = ctx.loaded.adapter
    token_keys = None if prompts is None else final_token_keys(ctx.loaded, prompts, ctx.run.max_tokens,
                                                              ctx.run.batch_size or 8)
    last_w_k = adapter.key_weights(adapter.shape.n_layers - 1)[0].float().cpu().numpy()
    table = geometry_side_by_side(extraction["hidden"][:, -1], entropy_of(extraction), embeddings, manifold, keys,
                                  focusing, seed=ctx.seed, vocab_size=min(vocab, len(embeddings)) if vocab else None,
                                  token_keys=token_keys, last_w_k=last_w_k)
    if as_released and prompts is not None:
        from geomprobe.paper_code import released_final_token_keys, released_keys_rows

        released, what = released_final_token_keys(ctx.loaded, prompts, ctx.run.max_tokens, ctx.run.batch_size or 8)
        table["rows"] += released_keys_rows(released, what)  # the row's paper_code_how says what they are
    return table


def run_geometry_suite(ctx) -> dict:
    work = ctx.work
    candidates, source = candidate_prompts(ctx)
    prompts, sample = stratified_prompts(ctx, candidates, work, label="")
    atomic_write_json(work / "sample.json", {"source": source, **sample})
    ctx.record_prompts(prompts, source)
    extraction = extract(ctx.loaded, prompts, ctx.extraction_config(layers=None), out_dir=work / "extraction",
                         label="geometry: sample", progress=ctx.progress)
    return ctx.write_results({
        "shape": dict(ctx.loaded.adapter.shape.__dict__),
        "prompts": {"source": source, "n": len(prompts), "stratified": sample["stratified"]},
        **geometry_results(ctx, extraction, prompts, candidates)})


def _ci(entry) -> str:
    return f"[{entry[0]:.3f}, {entry[1]:.3f}]"


def _vs_untrained(results: dict, name: str) -> tuple[str, str]:
    """(untrained null mean, comparison) cells for the summary table."""
    cmp = ((results.get("untrained_null") or {}).get("comparisons") or {}).get(name)
    if not cmp:
        return "-", "no null"
    if cmp.get("status") in ("not tested", "not measured"):
        return "-", "not tested"
    from geomprobe.analysis.null_comparison import difference_text, status_words, test_text

    status = status_words(cmp["status"]) + (", lower is better" if cmp.get("higher_is_better") is False else "")
    return f"{cmp['null_mean']:.3f}", f"{difference_text(cmp)}: {status} ({test_text(cmp)})"


def print_summary(results: dict) -> None:
    from rich.table import Table

    vm, keys, focus = results["value_manifold"], results["key_orthogonality"], results["attention_focusing"]
    nulls = results.get("untrained_null")
    untrained = f"untrained ({len(nulls['models'])})" if nulls else "untrained"
    table = Table(title=f"geometry: {results['model']}, {results['prompts']['n']} prompts")
    for column in ("signature", "measured", "95% CI", untrained, "model - untrained", "other baselines"):
        table.add_column(column)
    table.add_row(f"value manifold PC1 (layer {vm['layer']}, {vm['readout']})", f"{vm['pc1']:.3f}",
                  _ci(vm["pc1_ci95"]), *_vs_untrained(results, "pc1"),
                  f"shuffle {vm['shuffle_null']['pc1']['median']:.3f}, gaussian {vm['gaussian_null']['pc1']['median']:.3f}")
    table.add_row("value manifold PC1+PC2", f"{vm['pc12']:.3f}", _ci(vm["pc12_ci95"]), *_vs_untrained(results, "pc12"),
                  f"shuffle {vm['shuffle_null']['pc12']['median']:.3f}")
    if vm.get("rho_pc1_entropy") is not None:
        table.add_row("Spearman rho(PC1, next-token entropy)", f"{vm['rho_pc1_entropy_raw']:+.3f}", "", "", "", "")
        given = vm.get("rho_pc1_entropy_given_length") or {}
        if given.get("value") is not None:
            ci = given["ci95"]
            table.add_row("  the same given prompt length (partial)", f"{given['value']:+.3f}",
                          "" if ci[0] is None else f"[{ci[0]:+.3f}, {ci[1]:+.3f}]", "", "", "")
    base = f"analytic {keys['analytic_gaussian']:.3f}, empirical {keys['empirical_gaussian']['mean']:.3f}"
    if "init" in keys.get("baselines", {}):
        base += f", init {keys['baselines']['init']['mean']:.3f}"
    if "step0" in keys.get("baselines", {}):
        base += f", step0 {keys['baselines']['step0']['mean']:.3f}"
    table.add_row("key orthogonality: mean |cos| over layers (lower: more orthogonal)",
                  f"{np.mean(keys['layer_mean']):.3f}", "", *_vs_untrained(results, "keys"), base)
    table.add_row(f"  fraction of layers < {keys['threshold']:.2f}", f"{keys['fraction_below']:.2f}", "", "", "", "")
    table.add_row("attention focusing 1 - H(L-1)/H(0)", f"{focus['focusing']:.3f}", _ci(focus["focusing_ci95"])
                  if focus["focusing_ci95"][0] is not None else "", *_vs_untrained(results, "focusing"),
                  "normalised " + ("n/a" if focus["normalised"]["focusing"] is None
                                   else f"{focus['normalised']['focusing']:.3f}"))
    console = table_console()
    console.print(table)
    final = vm.get("final_tokens")
    if final:
        common = ", ".join(f"{t['token']!r} x{t['n']}" for t in final["most_common"][:3])
        console.print(f"the {final['n_prompts']} prompts end in {final['n_distinct']} distinct tokens ({common}): "
                      "prompts ending in the same token share its layer-0 values in any network", markup=False)
    console.print(f"verdict: {results['verdict']['summary']}", markup=False)

register_suite("geometry", GeometryConfig, run_geometry_suite,
               "value manifold, key orthogonality and attention focusing with their baselines, and the verdict",
               schema=GeometryResults, schema_version=SCHEMA_VERSION, summary=print_summary)
