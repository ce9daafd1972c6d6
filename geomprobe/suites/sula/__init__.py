"""The `sula` suite: in-context Bayesian updating against the exact posterior (METHODS.md section 7).

1. Labels: two nonce words that the model's tokenizer writes as one token each where a label
   stands (geomprobe.sula_task.choose_labels; --labels overrides), and a second pair for lexical_remap.
   A wind-tunnel model gets its own trained label pairs, carrier words and k = 0 form.
2. Prompts (geomprobe.sula_task.generate): n_per_k per k, the main condition and each control with the
   same k, latent labels, carriers and noisy labels; written with their Bayes quantities and the
   model's outputs to <run>/sula/prompts-<condition>.jsonl.
3. Extraction per condition in <run>/sula/extraction-<condition>/ (resumable): next-token
   probabilities of the two labels, full-vocabulary entropy, final-token values (main: every layer,
   or --layers plus the last; controls: the last layer).
4. H_model = entropy of the next-token distribution restricted to {L1, L2}, renormalised (bits).
   Metrics per condition (MAE, correlations, per-k means, PC1), the controls' PC1 coordinates
   projected into the main condition's basis; the basis of every main layer in <run>/sula/axis.npz
   (for the entropy-axis interventions, METHODS.md section 8).
5. Confounds (H_bayes falls with k): rho(PC1, H_bayes) given k is the headline, beside the raw one;
   within-k rhos with a permutation test, partial correlations given the prompt length in tokens,
   and the trivial MAE baselines (constant, k only, H = 0) on a held-out half
   (geomprobe.analysis.confounds, via condition_metrics).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

import numpy as np

from geomprobe.analysis.sula_metrics import (
    binary_kl_bits,
    condition_metrics,
    fit_axis,
    restrict_to_labels,
)
from geomprobe.config import Readout
from geomprobe.console import table_console
from geomprobe.errors import ConfigError
from geomprobe.extraction import extract
from geomprobe.prompts import Prompt
from geomprobe.rundir import atomic_write_text
from geomprobe.sula_task import (
    CONDITIONS,
    CONTROLS,
    DEFAULT_K_VALUES,
    LabelChoice,
    SulaPrompt,
    SulaSpec,
    generate,
)

from ..base import (
    Definitions,
    NullOptions,
    definitions_option,
    needs_next_token,
    option,
    register_suite,
)
from ..entropy_axis import (  # noqa: F401  (re-exported: the suite's API before they were shared)
    SulaPromptOptions,
    _axis_arrays,
    extract_condition,
    layer_profile,
    main_axes,
    main_layers,
    save_axis_file,
    sula_setup,
    unsupported,
)
from .results import SCHEMA_VERSION, SulaResults

Control = Literal["lexical_remap", "shuffled", "carrier_mask", "label_mask"]


BAYES_NOTES = {
    "main": "exact posterior of the noisy-label model",
    "lexical_remap": "another label pair in the same places: Bayes unchanged",
    "shuffled": "example labels drawn independently of y: no evidence, H_bayes = 1",
    "carrier_mask": "carrier words (query included) masked: they carry no evidence, Bayes unchanged",
    "label_mask": "labels masked: no evidence, H_bayes = 1",
}

N_PERM = 999  # permutations of the within-k test of rho(PC1, H_bayes)

BAYES_SHORT = {"main": "exact", "lexical_remap": "unchanged", "shuffled": "flat", "carrier_mask": "unchanged",
               "label_mask": "flat"}

# Paper III's LLM values, printed next to the measurements (reference only, never a result).
REFERENCE_PAPER_III = {
    "mae_bits": {"pythia-410m": 0.44, "llama-3.2-1b": 0.36, "phi-2": 0.31},
    "abs_rho_pc1_H_bayes": [0.65, 0.80],
    "rho_k_pc1": {"pythia-410m": 0.86, "phi-2": 0.60, "llama-3.2-1b": 0.32},
    "official_code_pythia_410m": {"pc1": 0.264, "pc2": 0.113, "rho_pc1_entropy": -0.77, "n_prompts": 150},
}


@dataclass
class SulaConfig(SulaPromptOptions, NullOptions):
    """The sula suite: SULA prompts, their controls, and the entropy axis."""

    controls: tuple[Control, ...] = option(CONTROLS, "comma-separated controls, or all | none",
                                           aliases={"all": CONTROLS, "none": ()})
    readout: Readout = option("values", "what the axis is fitted on")
    definitions: Definitions = definitions_option()

    def readouts(self) -> tuple[str, ...]:
        return (self.readout,) if self.definitions == "geomprobe" else tuple(dict.fromkeys((self.readout, "hidden")))


def run_sula_suite(ctx) -> dict:
    config, loaded = ctx.options, ctx.loaded
    why = unsupported(loaded, ctx.run)
    if why:
        raise ConfigError(why)
    spec, choice, info, controls, skipped = sula_setup(loaded, config, ctx.seed)
    conditions = ["main", *controls]
    prompts = generate(spec, conditions)
    work = ctx.work
    last = loaded.adapter.shape.n_layers - 1
    layers = main_layers(loaded.adapter, ctx.run.layers)
    readout = config.readout

    axes, metrics, per_layer = {}, {}, []
    for condition in conditions:
        pair, records = spec.pair(condition), prompts[condition]
        paper_code = condition == "main" and getattr(config, "definitions", "geomprobe") != "geomprobe"
        extraction, model, vectors = extract_condition(ctx, spec, choice, records, condition,
                                                       layers if condition == "main" else [last], work, readout,
                                                       also=("hidden",) if paper_code else ())
        ctx.record_prompts([r.to_prompt() for r in records], f"sula:{condition} (seed {spec.seed})",
                           key="prompts" if condition == "main" else f"prompts_{condition}")
        H_bayes = np.array([r.H_bayes for r in records])
        if condition == "main":
            axes = main_axes(vectors, model["H_model"], last)
            per_layer = layer_profile(vectors, axes, H_bayes, model["H_model"])
        pc1 = axes[last].project(vectors[last])
        if condition == "main":
            main_error, main_pc1 = np.abs(model["H_model"] - H_bayes), pc1
            if paper_code:
                side_inputs = (vectors[last], extraction["hidden"][:, extraction.layers.index(last)], H_bayes,
                               model["H_model"], np.array([r.k for r in records]))
        kl = binary_kl_bits([r.target_l1 for r in records], model["p_model_l1"])
        metrics[condition] = {
            "labels": list(pair), "bayes": BAYES_NOTES[condition],
            "pc1_basis": "own (main condition)" if condition == "main" else "projected into the main condition's basis",
            **condition_metrics([r.k for r in records], H_bayes, model["H_model"], pc1, model["label_mass"], kl,
                                extraction["next_entropy_bits"], n_boot=config.n_boot, seed=ctx.seed,
                                p_model_l1=model["p_model_l1"], n_tokens=extraction["n_tokens"], n_perm=N_PERM)}
        rows = [{**r.to_dict(), "p_model_l1": float(model["p_model_l1"][i]), "H_model": float(model["H_model"][i]),
                 "label_mass": float(model["label_mass"][i]), "kl_bits": float(kl[i]),
                 "next_entropy_bits": float(extraction["next_entropy_bits"][i]), "pc1": float(pc1[i]),
                 "n_tokens": int(extraction["n_tokens"][i])}
                for i, r in enumerate(records)]
        atomic_write_text(work / f"prompts-{condition}.jsonl", "".join(json.dumps(row) + "\n" for row in rows))

    save_axis_file(work / "axis.npz", axes, last, readout)
    nulls = null_results(ctx, spec, choice, prompts["main"], last, readout, main_error, main_pc1)
    example = {c: prompts[c][min(len(prompts[c]) - 1, spec.n_per_k * (len(spec.k_values) - 1))].text
               for c in conditions}
    results = {
        "settings": {**spec.describe(), "controls": controls, "skipped_controls": skipped,
                     "label_choice": choice.to_dict(), "windtunnel": info is not None, "n_boot": config.n_boot,
                     "n_perm": N_PERM,
                     "example_prompts": example},
        "axis": {"layer": last, "readout": readout, **axes[last].summary(), "file": "axis.npz",
                 "note": "PC1 of the main prompts' standardised last-layer vectors; controls are standardised with "
                         "the main means and scales and projected on the same unit vector"},
        "conditions": metrics,
        "per_layer": per_layer,
        "untrained_null": nulls,
        "reference_paper_iii": REFERENCE_PAPER_III,
        "definitions": getattr(config, "definitions", "geomprobe"),
    }
    if results["definitions"] != "geomprobe":
        from geomprobe.paper_code import released_final_token_values, released_values_rows, sula_side_by_side

        results["paper_code"] = table = sula_side_by_side(*side_inputs, metrics["main"], results["axis"])
        if results["definitions"] == "paper-code-as-released":
            released, what = released_final_token_values(loaded, [r.to_prompt() for r in prompts["main"]], last,
                                                         ctx.run.max_tokens, ctx.run.batch_size or 8)
            table["rows"] += released_values_rows(released, side_inputs[2], what)
            table.update(definitions="paper-code-as-released", released_values=what,
                         note="AS RELEASED: the rows 'values as released' read the released code's value split, "
                              "which is wrong for GPT-NeoX (METHODS.md section 11); " + table["note"])
    return ctx.write_results(results)


def abs_rho_given_k(rows) -> float:
    """rows [n, 3] = (PC1 coordinate, H_bayes, k) -> |Spearman partial rho(PC1, H_bayes) given k|,
    the controlled statistic (geomprobe.analysis.confounds) as a function of rows, to bootstrap."""
    from geomprobe.analysis.confounds import partial_rho_given_strata

    value = partial_rho_given_strata(rows[:, 0], rows[:, 1], rows[:, 2])
    if not np.isfinite(value):
        raise ValueError("no variation left within k")
    return abs(value)


def null_results(ctx, spec, choice, records, last: int, readout: str, model_error, model_pc1) -> dict | None:
    """The main condition on each untrained null model (geomprobe.nulls): its SULA MAE and its
    controlled |rho(PC1, H_bayes) given k| on its own axis, and the model against them."""
    from geomprobe.analysis.null_comparison import compare_to_nulls, mean_of, not_tested

    specs = ctx.null_specs()
    if not specs:
        return None
    H_bayes = np.array([r.H_bayes for r in records])
    k = np.array([r.k for r in records], dtype=np.float64)
    tokens = [choice.token_strings[w] for w in spec.pair("main")]
    errors, coords, per_null = [], [], []
    tracker = ctx.sequential(specs)  # copies stop once neither decision can change
    tracker.watch("mae_bits", mean_of(model_error), higher_is_better=False)
    try:
        tracker.watch("abs_rho_pc1_H_bayes_given_k", abs_rho_given_k(np.c_[model_pc1, H_bayes, k]))
    except ValueError:
        tracker.watch("abs_rho_pc1_H_bayes_given_k", None)
    for index, (null, copy) in enumerate(ctx.nulls(specs)):
        if tracker.settled():
            break
        extraction = extract(copy, [r.to_prompt() for r in records],
                             ctx.extraction_config(layers=[last], readouts=(readout,), tokens=tokens),
                             out_dir=ctx.work / "nulls" / null.name / "extraction-main", progress=ctx.progress,
                             label=f"sula: {null.label}, main")
        side = restrict_to_labels(extraction["token_probs"])
        vectors = extraction[readout][:, 0].reshape(len(records), -1)
        entry = {**null.to_dict(), "mae_bits": float(np.mean(np.abs(side["H_model"] - H_bayes))),
                 "per_k": [{"k": int(level), "n": int((k == level).sum()),
                            "H_model": float(np.mean(side["H_model"][k == level])),
                            "mae_bits": float(np.mean(np.abs(side["H_model"] - H_bayes)[k == level]))}
                           for level in np.unique(k)]}
        try:
            coordinate = fit_axis(vectors, side["H_model"]).project(vectors)
            entry["abs_rho_pc1_H_bayes_given_k"] = abs_rho_given_k(np.c_[coordinate, H_bayes, k])
        except ValueError as error:  # an untrained copy whose final-token vectors do not vary
            coordinate = np.zeros(len(records))
            entry["note"] = str(error)
        errors.append(np.abs(side["H_model"] - H_bayes))
        coords.append(np.c_[coordinate, H_bayes, k])
        per_null.append(entry)
        tracker.add("mae_bits", entry["mae_bits"])
        tracker.add("abs_rho_pc1_H_bayes_given_k", entry.get("abs_rho_pc1_H_bayes_given_k"))
        if tracker.settled() and ctx.progress:
            print(f"sula: copy {index + 1}/{len(specs)}: neither decision can change now; the other copies are not "
                  "built (--no-null-stop builds them all)", flush=True)
    comparisons = {}
    plan = [("mae_bits", mean_of, model_error, errors, False, "SULA MAE |H_model - H_bayes| (bits; lower is better)"),
            ("abs_rho_pc1_H_bayes_given_k", abs_rho_given_k, np.c_[model_pc1, H_bayes, k], coords, True,
             "|Spearman partial rho(PC1, H_bayes) given k|, each model on its own axis")]
    for name, statistic, model, nulls, higher, label in plan:
        try:
            comparisons[name] = compare_to_nulls(statistic, model, nulls, higher_is_better=higher, name=label,
                                                 sequential=tracker.record(name))
        except ValueError as error:
            comparisons[name] = not_tested(label, str(error))
    return {"spec": ctx.options.null, "description": ", ".join(n.name for n in specs), "models": per_null,
            "comparisons": comparisons, "copies": tracker.summary(),
            "note": "the main SULA prompts on untrained copies of the same architecture, through the same "
                    "extraction; each null's axis is fitted on its own vectors"}


def check_options(loaded, run_config, options) -> None:
    """The label pair (single tokens of this tokenizer) and the wind tunnel's task, before anything is written."""
    sula_setup(loaded, options, run_config.seed)


def _fmt(entry, digits: int = 3) -> str:
    """'0.123 [0.100, 0.150]' from an Estimate; '-' when there is none or its value is undefined."""
    if entry is None or entry["value"] is None:
        return "-"
    value = entry["value"]
    low, high = entry["ci95"]
    return f"{value:.{digits}f}" + ("" if low is None else f" [{low:.{digits}f}, {high:.{digits}f}]")


def _p(entry) -> str:
    pvalue = None if entry is None else entry.get("pvalue")
    return "" if pvalue is None else f", p = {pvalue:.3g}"


BASELINE_ROWS = (("model", "the model, |H_model - H_bayes|"), ("k_only", "k only (mean H_bayes per k)"),
                 ("k_only_median", "k only (median H_bayes per k)"), ("constant", "constant (mean H_bayes)"),
                 ("zero", "H = 0"), ("model_minus_k_only", "model - k only (paired)"))


def print_summary(results: dict) -> None:
    from rich.table import Table

    settings, main = results["settings"], results["conditions"]["main"]
    console = table_console()
    table = Table(title=f"SULA: {results['model']}, labels {'/'.join(settings['labels'])}, alpha {settings['alpha']}, "
                        f"target {settings['target']}, {main['n_prompts']} prompts (95% CI)")
    for column in ("k", "H_bayes (bits)", "H_model (bits)", "MAE (bits)", "PC1 mean", "rho(PC1, H_bayes) within k"):
        table.add_column(column, justify="right")
    for row in main["per_k"]:
        table.add_row(str(row["k"]), _fmt(row["H_bayes"]), _fmt(row["H_model"]), _fmt(row["mae_bits"]),
                      _fmt(row["pc1"], 2), _fmt(row.get("rho_pc1_H_bayes"), 2))
    table.add_row("all", _fmt(main["H_bayes"]), _fmt(main["H_model"]), _fmt(main["mae_bits"]), "",
                  _fmt(main.get("rho_pc1_H_bayes_within_k"), 2) + " pooled")
    console.print(table)
    nulls = results.get("untrained_null")
    if nulls:
        from geomprobe.analysis.null_comparison import comparison_text

        for cmp in nulls["comparisons"].values():
            console.print(f"untrained copies ({nulls['description']}): {cmp['statistic']}: {comparison_text(cmp)}",
                          markup=False)
    axis = results["axis"]
    console.print(f"Pearson(H_model, H_bayes) {_fmt(main['pearson_H_model_H_bayes'])}, Spearman "
                  f"{_fmt(main['spearman_H_model_H_bayes'])}; axis (layer {axis['layer']}, {axis['readout']}): PC1 "
                  f"{axis['pc1_explained']:.3f} of variance, {axis['sign']}")
    within = main.get("rho_pc1_H_bayes_within_k")
    console.print(f"[bold]rho(PC1, H_bayes) given k {_fmt(main.get('rho_pc1_H_bayes_given_k'))}[/bold] (Spearman "
                  f"partial{_p(main.get('rho_pc1_H_bayes_given_k'))}); within k {_fmt(within)} (permutation"
                  f"{_p(within)}); raw over all k {_fmt(main['rho_pc1_H_bayes'])} (confounded with k)")
    if "rho_pc1_H_bayes_given_n_tokens" in main:
        console.print(f"rho(PC1, H_bayes) given prompt length {_fmt(main['rho_pc1_H_bayes_given_n_tokens'])}, given "
                      f"k and length {_fmt(main['rho_pc1_H_bayes_given_k_n_tokens'])}; rho(n_tokens, PC1) "
                      f"{_fmt(main['rho_n_tokens_pc1'])} (the length confound)")
    console.print(f"rho(k, PC1) {_fmt(main['rho_k_pc1'])} (the confound: PC1 tracking the number of examples), "
                  f"rho(PC1, H_model) {_fmt(main['rho_pc1_H_model'])}, rho(PC1, model p(L1)) "
                  f"{_fmt(main.get('rho_pc1_p_model_l1'))}")
    baselines = main.get("mae_baselines")
    if baselines:
        split = baselines["split"]
        trivial = Table(title=f"MAE against H_bayes on a held-out half ({split['n_score']} prompts scored; baselines "
                              f"fitted on the other {split['n_fit']}, split by k, seed {split['seed']})")
        for column in ("predictor", "MAE (bits)"):
            trivial.add_column(column, justify="right" if column != "predictor" else "left")
        for key, label in BASELINE_ROWS:
            trivial.add_row(label, _fmt(baselines.get(key)))
        console.print(trivial)
    ref = results["reference_paper_iii"]
    console.print(f"paper III (LLMs): MAE {min(ref['mae_bits'].values())}-{max(ref['mae_bits'].values())} bits, "
                  f"|rho(PC1, H_bayes)| {ref['abs_rho_pc1_H_bayes'][0]}-{ref['abs_rho_pc1_H_bayes'][1]} (raw, over all "
                  f"k), rho(k, PC1) {min(ref['rho_k_pc1'].values())}-{max(ref['rho_k_pc1'].values())}")
    if len(results["conditions"]) > 1:
        controls = Table(title="controls (same k and latent labels; PC1 in the main condition's basis)")
        for column in ("condition", "Bayes", "H_bayes", "H_model", "MAE (bits)", "k-only MAE*", "Pearson",
                       "rho(PC1,H_model)", "rho(PC1,H_bayes|k)",
                       "PC1 mean, k = " + ",".join(str(row["k"]) for row in main["per_k"])):
            controls.add_column(column)
        for name, entry in results["conditions"].items():
            pearson, rho = entry["pearson_H_model_H_bayes"]["value"], entry["rho_pc1_H_model"]["value"]
            given_k = (entry.get("rho_pc1_H_bayes_given_k") or {}).get("value")
            k_only = ((entry.get("mae_baselines") or {}).get("k_only") or {}).get("value")
            controls.add_row(name, BAYES_SHORT[name], f"{entry['H_bayes']['value']:.3f}",
                             f"{entry['H_model']['value']:.3f}", _fmt(entry["mae_bits"]),
                             "-" if k_only is None else f"{k_only:.3f}", "-" if pearson is None else f"{pearson:+.2f}",
                             "-" if rho is None else f"{rho:+.2f}", "-" if given_k is None else f"{given_k:+.2f}",
                             " ".join(f"{row['pc1']['value']:+.1f}" for row in entry["per_k"]))
        console.print(controls)
        console.print("* on the held-out half, fitted on the other half (as in the baselines table)")
    for name, why in results["settings"]["skipped_controls"].items():
        console.print(f"{name} skipped: {why}")


# ----------------------------------------------------------------------------------------------
# The prompts of one model


@dataclass(frozen=True)
class SulaPromptSet:
    """The SULA prompts of one model (`prompts_for`) and what made them.

    records: condition -> SulaPrompt list (k-major, n_per_k per k), in the order asked for.
    spec: the SulaSpec they were generated from; choice: the label pairs and their token strings.
    windtunnel: whether the model is a wind tunnel (its own carrier words, labels and k = 0 form).
    """

    records: dict
    spec: SulaSpec
    choice: LabelChoice
    windtunnel: bool = False

    def __getitem__(self, condition: str) -> list[SulaPrompt]:
        if condition not in self.records:
            raise ConfigError(f"no '{condition}' prompts here (conditions: {', '.join(self.records)}): "
                              f"ask prompts_for(..., conditions=(..., '{condition}'))")
        return self.records[condition]

    @property
    def conditions(self) -> list[str]:
        return list(self.records)

    def prompts(self, condition: str = "main") -> list[Prompt]:
        """The condition's prompts as geomprobe.prompts.Prompt, for extract()."""
        return [record.to_prompt() for record in self[condition]]

    def tokens(self, condition: str = "main") -> list[str]:
        """The condition's two label tokens as strings (L1, L2), for ExtractionConfig(tokens=...):
        token_probs[:, 0] is then p(L1)."""
        self[condition]
        return [self.choice.token_strings[word] for word in self.spec.pair(condition)]

    def __repr__(self) -> str:
        counts = ", ".join(f"{c} {len(r)}" for c, r in self.records.items())
        return (f"SulaPromptSet: labels {'/'.join(self.spec.labels)}, k {','.join(map(str, self.spec.k_values))}, "
                f"{self.spec.n_per_k} per k, seed {self.spec.seed}{', wind tunnel' if self.windtunnel else ''}; "
                f"{counts}")


def prompts_for(loaded, *, n_per_k: int = 250, k_values=DEFAULT_K_VALUES, alpha: float = 0.9,
                target: str = "posterior", labels=None, template: str | None = None, seed: int = 0,
                conditions=("main",)) -> SulaPromptSet:
    """The SULA prompts that `geomprobe run --suite sula` uses for this model with the same options
    (its prompts-<condition>.jsonl), built by the same code (sula_setup, then
    `generate`): label words that are single tokens of this tokenizer (a wind tunnel's own trained
    pairs), and for a wind tunnel its carrier words and k = 0 form.

        sula = prompts_for(loaded, n_per_k=50, seed=0)
        ex = extract(loaded, sula.prompts(), ExtractionConfig(tokens=sula.tokens()))
        sula["main"][0].H_bayes   # bits

    The options are the sula suite's (SulaPromptOptions): labels "A,B" or (A, B), default nonce words
    chosen for the tokenizer; template with {examples} and {query}. conditions: any of CONDITIONS.
    seed: RunConfig.seed of the equivalent run.

    Raises ConfigError, in one line, when the prompts would not be read as written: a label that is
    not one token, or a prompt holding the tokenizer's unknown token (e.g. a template's words that a
    wind tunnel's vocabulary lacks), naming the first such prompt and its unknown words."""
    from geomprobe.extraction import unknown_token_id, unknown_words

    conditions = (conditions,) if isinstance(conditions, str) else tuple(conditions)
    unknown = [c for c in conditions if c not in CONDITIONS]
    if unknown or not conditions or len(set(conditions)) != len(conditions):
        raise ConfigError(f"prompts_for: conditions must be distinct names from {', '.join(CONDITIONS)}; got "
                          f"{list(conditions)}")
    why = needs_next_token(loaded, "sula")
    if why:
        raise ConfigError(why)
    options = SulaPromptOptions(n_per_k=n_per_k, k_values=tuple(k_values), alpha=alpha, target=target,
                                labels=labels, template=template)
    spec, choice, info, _, _ = sula_setup(loaded, options, seed)
    if "lexical_remap" in conditions and choice.remap is None:
        raise ConfigError(f"lexical_remap: only one label pair qualifies for {loaded.spec}"
                          + (" (the wind tunnel was trained on one pair)" if info is not None else "")
                          + "; drop it from conditions")
    records = generate(spec, conditions)
    tokenizer = loaded.tokenizer
    unk = unknown_token_id(tokenizer)
    if unk is not None:
        for condition, rows in records.items():
            encoded = tokenizer([row.text for row in rows])["input_ids"]
            bad = next((i for i, ids in enumerate(encoded) if unk in ids), None)
            if bad is None:
                continue
            row = rows[bad]
            n_bad = sum(unk in ids for ids in encoded)
            words = ", ".join(map(repr, dict.fromkeys(unknown_words(tokenizer, row.text))))
            advice = ("a wind tunnel knows only its task's words: drop the template" if info is not None
                      else "write the template in words the tokenizer knows") if template is not None else \
                "choose labels and a template in words the tokenizer knows"
            raise ConfigError(f"SULA prompt '{row.id}' ({condition}, one of {n_bad}) {row.text!r} holds words that "
                              f"{loaded.spec}'s tokenizer does not know ({words}), so they would read as its unknown "
                              f"token: {advice}")
    return SulaPromptSet(records=records, spec=spec, choice=choice, windtunnel=info is not None)

register_suite("sula", SulaConfig, run_sula_suite,
               "in-context Bayesian updating against the exact posterior, four controls, the entropy axis",
               unsupported=unsupported, check=check_options,
               schema=SulaResults, schema_version=SCHEMA_VERSION, summary=print_summary)
