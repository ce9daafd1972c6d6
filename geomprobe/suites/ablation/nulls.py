"""The ablation suite's untrained copies (geomprobe.nulls, package docstring, item 6): how many
`--null auto` runs, the same ablation on each copy on its own entropy axis, and one condition's
primary statistic judged against them. They run the model's own passes (passes.py) on each copy."""

from __future__ import annotations

import numpy as np

from geomprobe import copycache
from geomprobe.analysis.ablation_metrics import (
    READING_THRESHOLDS,
    behaviour_point,
    calibrated_thresholds,
    primary_statistic,
)
from geomprobe.analysis.sula_metrics import restrict_to_labels
from geomprobe.errors import ConfigError
from geomprobe.extraction import ExtractionConfig, extract
from geomprobe.prompts import prompts_hash

from .conditions import downstream_of
from .passes import _common_key, _edit_setup, run_passes

# (largest parameter count, untrained copies `--null auto` runs). A copy costs a whole suite here
# (its own axis fit, matched controls and every condition: 81 passes on windtunnel-sula, 241 on
# Pythia-410M), so auto runs 3 at every size, where the other suites run 5-19: the t rule then
# detects 2.87 copy sd half the time (2 sd: 32%), printed beside every result; --null init:7 gets
# 1.99 sd at 8x the suite's time.
ABLATION_NULL_COUNTS = ((float("inf"), 3),)


def ablation_null_count(n_params: float | None) -> int:
    """The untrained copies `--null auto` stands for in the ablation suite (ABLATION_NULL_COUNTS)."""
    if n_params is None:
        return ABLATION_NULL_COUNTS[0][1]
    return next(count for limit, count in ABLATION_NULL_COUNTS if n_params <= limit)


def null_ablation(ctx, null, copy, spec, choice, records, operations, sets, needed: list[int]) -> dict:
    """The suite's conditions on one untrained copy: the SULA main condition extracted through it,
    its own axes fitted there, its own matched controls, the same passes; per condition the
    primary statistic and the true and random axes' behaviour changes. A condition whose layers
    have no axis on this copy (or nothing downstream) is left out with why."""
    from geomprobe.interventions import InterventionAxis, save_axes
    from geomprobe.suites.entropy_axis import main_axes, main_layers

    config = ctx.options
    work = ctx.work / "nulls" / null.name
    prompts = [r.to_prompt() for r in records]
    H_bayes = np.array([r.H_bayes for r in records])
    n_layers = copy.adapter.shape.n_layers
    last = n_layers - 1
    tokens = [choice.token_strings[w] for w in spec.labels]
    fit_config = ExtractionConfig(layers=main_layers(copy.adapter, needed), readouts=("values",), tokens=tokens,
                                  backend="hf", max_tokens=ctx.run.max_tokens, batch_size=ctx.run.batch_size)
    main_dir = work / "sula-main" / "extraction-main"
    main = extract(copy, prompts, fit_config, out_dir=main_dir, progress=ctx.progress,
                   label=f"ablation: {null.label}, SULA main")
    H_model = restrict_to_labels(main["token_probs"])["H_model"]
    vectors = {layer: main["values"][:, column].reshape(len(records), -1) for column, layer in enumerate(main.layers)}
    entry = {**null.to_dict(), "conditions": {}, "not_measured": {}}
    try:
        fitted = main_axes(vectors, H_model, last)
    except ConfigError as error:
        entry["note"] = str(error)
        return entry
    axes = {layer: InterventionAxis.from_sula(a) for layer, a in fitted.items() if a is not None and layer in needed}
    usable = []
    for set_name, layers in sets:
        if any(layer not in axes for layer in layers) or not downstream_of(layers, axes, n_layers):
            entry["not_measured"][set_name] = "no entropy axis at an edited layer, or none downstream, on this copy"
        else:
            usable.append((set_name, layers))
    if not usable:
        return entry
    edited = sorted({layer for _, layers in usable for layer in layers})
    extraction_config = ExtractionConfig(layers=sorted(axes), readouts=("values",), tokens=tokens, backend="hf",
                                         max_tokens=ctx.run.max_tokens, batch_size=ctx.run.batch_size)
    save_axes(work / "axis.npz", axes, source=np.array(f"the SULA main condition through {null.name}"))
    edit_base, controls = _edit_setup(copy, prompts, extraction_config, axes, edited, main_dir, config, ctx.seed, work)
    common = _common_key(prompts, extraction_config, axes, edit_base, controls, ctx, config.definitions)
    ran = run_passes(copy, prompts, extraction_config, axes, edit_base, controls, operations, usable, config,
                     ctx.run, ctx.seed, work / "conditions", common, ctx.progress, f"ablation: {null.label}",
                     ctx.batch_planner)
    base = restrict_to_labels(np.array(ran.passes["baseline"]["token_probs"]))["H_model"]
    for name, _, _ in operations:
        for set_name, _ in usable:
            true = restrict_to_labels(np.array(ran.passes[f"{name}_{set_name}_true"]["token_probs"]))["H_model"]
            randoms = [restrict_to_labels(np.array(ran.passes[f"{name}_{set_name}_random{draw:02d}"]["token_probs"])
                                          )["H_model"] for draw in range(config.n_random)
                       if f"{name}_{set_name}_random{draw:02d}" in ran.passes]  # none where refused
            true_point = behaviour_point(H_bayes, base, true)
            random_points = [behaviour_point(H_bayes, base, H) for H in randoms]
            primary = primary_statistic(true_point["mean_abs_dH_bits"], [p["mean_abs_dH_bits"] for p in random_points])
            entry["conditions"][f"{name}/{set_name}"] = {
                "rank": primary["rank"], "of": primary["of"], "log2_ratio": primary["log2_ratio"],
                "true_mean_abs_dH_bits": true_point["mean_abs_dH_bits"],
                "random_mean_abs_dH_bits": primary["random_mean"],
                "delta_mae_bits": [true_point["delta_mae_bits"], *[p["delta_mae_bits"] for p in random_points]],
                "delta_pearson": [true_point["delta_pearson"], *[p["delta_pearson"] for p in random_points]]}
    entry["n_forward_passes"] = ran.n_passes
    entry["mae_bits"] = float(np.mean(np.abs(base - H_bayes)))
    return entry


def _copy_result_key(ctx, copy, spec, choice, records, operations, sets, needed) -> dict | None:
    """What determines null_ablation's entry for this copy (geomprobe.copycache.key_of: the copy's
    identity, tokenizer and versions), or None with the cache off or for a checkpoint null: the
    suite's options, the run's settings, the seed, the task, labels and prompts, the operations,
    layer sets and needed layers (not --null: which copies run does not change one copy's entry).
    Over-keyed on purpose: a miss costs time, a wrong hit a result."""
    run = ctx.run
    options = {k: v for k, v in ctx.options.to_dict().items() if k not in ("null", "null_stop")}
    request = {"what": "ablation null_ablation", "options": options,
               "run": {"max_tokens": run.max_tokens, "batch_size": run.batch_size, "backend": run.backend,
                       "dtype": run.dtype, "device": str(getattr(copy, "device", ""))},
               "seed": ctx.seed, "task": repr(spec), "labels": repr(sorted(choice.token_strings.items())),
               "prompts_sha256": prompts_hash([r.to_prompt() for r in records]),
               "H_bayes": [round(float(r.H_bayes), 12) for r in records],
               "operations": repr(operations), "sets": repr(sets), "needed": [int(n) for n in needed]}
    return copycache.key_of(copy, request)


def null_ablations(ctx, spec, choice, records, operations, sets, needed: list[int]) -> dict | None:
    """null_ablation on each untrained copy of --null, one copy alive at a time; None with --null off."""
    specs = ctx.null_specs()
    if not specs:
        return None
    models = []
    for null, copy in ctx.nulls(specs):
        key = _copy_result_key(ctx, copy, spec, choice, records, operations, sets, needed)
        entry = copycache.restore_result(key)
        if entry is None:
            entry = null_ablation(ctx, null, copy, spec, choice, records, operations, sets, needed)
            copycache.store_result(key, entry)
        elif ctx.progress:
            print(f"ablation: {null.label}: its conditions from the copy cache ({entry['from_copy_cache']})", flush=True)
        models.append(entry)
    return {"spec": ctx.options.null, "description": ", ".join(n.name for n in specs), "models": models,
            "note": "each untrained copy runs the same conditions on its own entropy axis (fitted on its own SULA "
                    "main extraction) with its own matched random axes"}


def untrained_for(condition_id: str, untrained: dict | None, model_ratio) -> tuple[dict | None, dict]:
    """(the primary statistic against the untrained copies, the condition's "behaviour changed"
    thresholds) for one condition: judge_against_nulls of the model's log2 ratio among the copies'
    (fail closed: "not tested" when it cannot be computed), and calibrated_thresholds from every
    copy's edits of the condition; without copies (None, the fixed fallback)."""
    from geomprobe.analysis.null_comparison import judge_against_nulls, not_tested

    fixed = {"mae_bits": READING_THRESHOLDS["mae_bits"], "pearson": READING_THRESHOLDS["pearson"],
             "source_fixed": READING_THRESHOLDS["behaviour_source"]}
    if untrained is None:
        return None, fixed
    measured = [m["conditions"][condition_id] for m in untrained["models"] if condition_id in m["conditions"]]
    changes = {"mae_bits": [v for m in measured for v in m["delta_mae_bits"]],
               "pearson": [v for m in measured for v in m["delta_pearson"]]}
    thresholds = calibrated_thresholds(changes)
    label = "log2(true / mean matched random) of the mean |dH|, each copy on its own axis"
    ratios = [m["log2_ratio"] for m in measured if m["log2_ratio"] is not None]
    if model_ratio is None:
        return not_tested(label, "the model's ratio is undefined (no |dH| from the true or the random axes)"), thresholds
    if not ratios:
        return not_tested(label, "no untrained copy measured this condition"), thresholds
    judged = judge_against_nulls(model_ratio, ratios, higher_is_better=True)
    missing = len(untrained["models"]) - len(measured)
    if missing:
        judged["note"] = f"{missing} of {len(untrained['models'])} copies could not run this condition (their not_measured)"
    return {"statistic": label, **judged}, thresholds
