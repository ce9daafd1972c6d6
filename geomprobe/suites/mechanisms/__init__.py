"""The `mechanisms` suite (papers I and II): how a model reaches the posterior.

On a wind-tunnel model (a built-in `windtunnel-*` alias or a `geomprobe windtunnel train` output):
1. Q-K alignment per layer at every supervised position of --n-sequences task sequences: the
   attention row and the cosine between the post-rotary query and every visible key, per head and
   head-averaged; attention entropy, and the attention mass on the task's evidence
   (geomprobe.windtunnel.evidence) against a uniform row's share. Attention focusing (METHODS.md
   section 4) from each sequence's last supervised position.
2. The layer-0 hypothesis frame: token-key orthogonality of the task's frame tokens at layer 0
   against the analytic Gaussian value at d_head, shuffled keys, random token subsets and fresh
   initialisations (--init-seeds).
3. Ablations: held-out entropy MAE against the exact posterior (--n-eval sequences, the training
   run's held-out seed) with each head mean-ablated (means over --n-reference other sequences),
   each layer's heads all mean-ablated, and each layer skipped; which layer-0 head carries the frame.
4. Two timescales (paper II): the frame-precision curves of geomprobe.windtunnel.dissociation when
   the model directory holds checkpoints and metrics.json (read from its curves.json when present,
   else computed; --curves off skips), and the checkpoint at which each curve settles.
On any other model (and on a wind tunnel given --prompts): Q-K alignment and attention focusing at
the final token of each prompt (--prompts, default the built-in demo prompts).
Everything goes to <run>/mechanisms/results.json, and a sample of the rows to qk_rows.npz.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from geomprobe.analysis.focusing import attention_focusing
from geomprobe.analysis.mechanism_metrics import frame_orthogonality, head_concentration, settling_steps
from geomprobe.analysis.qk_alignment import attention_entropy_bits, qk_alignment
from geomprobe.console import table_console
from geomprobe.prompts import Prompt
from geomprobe.rundir import atomic_save_npz

from ..base import NullOptions, option, register_suite, suite_prompts, windtunnel_task
from .results import SCHEMA_VERSION, MechanismsResults

REF_FRAME = "paper I v3: layer-0 key orthogonality 0.052 vs 0.082 random (mean |cos|)"
REF_QK = "paper I: Q-K alignment diffuse at layer 0, concentrated on the evidence by the last layer"
N_SAMPLE_SEQUENCES = 16  # rows of this many sequences are kept in qk_rows.npz


@dataclass
class MechanismsConfig(NullOptions):
    """Papers I and II: Q-K alignment, the layer-0 frame, head and layer ablations, two timescales."""

    n_sequences: int = option(256, "wind-tunnel task sequences for Q-K alignment (every supervised position)", min=2)
    n_eval: int = option(1024, "held-out task sequences scoring each head/layer ablation against the exact "
                               "posterior", min=2)
    n_reference: int = option(256, "task sequences whose per-position mean head outputs replace an ablated head",
                              min=2)
    curves: Literal["auto", "off"] = option("auto", "frame-precision curves from the model directory's "
                                                    "checkpoints, when it has them")
    init_seeds: int = option(3, "freshly initialised copies for the layer-0 frame's untrained baselines", min=0)


def _focus_rows(rows: dict, last_only: bool) -> np.ndarray:
    """The row of each sequence that focusing reads: its last query row when last_only, else every row."""
    if not last_only:
        return np.arange(len(rows["probs"]))
    # rows are in sequence order, so each sequence's last row is its last supervised position
    return np.flatnonzero(np.r_[rows["sequence"][1:] != rows["sequence"][:-1], True])


def _focusing(rows: dict, last_only: bool, config, seed: int) -> dict | None:
    """attention_focusing on one row per sequence (its last query row when last_only)."""
    entropy = attention_entropy_bits(rows["probs"])  # [n_rows, L, H]
    picks = _focus_rows(rows, last_only)
    visible = rows["visible"][picks].sum(-1)
    try:
        result = attention_focusing(entropy[picks], np.repeat(visible[:, None], entropy.shape[1], 1),
                                    n_boot=config.n_boot, seed=seed).to_dict()
    except ValueError as error:
        return {"note": str(error)}
    result["rows"] = "each sequence's last supervised position" if last_only else "each prompt's final token"
    return result


def _save_sample(path: Path, rows: dict) -> None:
    keep = rows["sequence"] < N_SAMPLE_SEQUENCES
    arrays = {name: rows[name][keep] for name in ("probs", "cosine", "visible", "sequence")}
    arrays["probs"], arrays["cosine"] = arrays["probs"].astype(np.float16), arrays["cosine"].astype(np.float16)
    for name in ("evidence", "query_position"):
        if rows.get(name) is not None:
            arrays[name] = rows[name][keep]
    atomic_save_npz(path, **arrays)


def alignment_results(rows: dict, config, seed: int, description: str, last_only: bool) -> tuple[dict, dict | None]:
    qk = qk_alignment(rows["probs"], rows["cosine"], rows["visible"], evidence=rows.get("evidence"),
                      sequence=rows["sequence"], n_boot=config.n_boot, seed=seed).to_dict()
    qk["rows"] = description
    return qk, _focusing(rows, last_only, config, seed)


def _last_layer_mean(per_sequence: np.ndarray) -> float:
    """[n_sequences, L] -> the mean over sequences at the last layer (sequences without a value left out)."""
    column = per_sequence[:, -1]
    column = column[np.isfinite(column)]
    if not column.size:
        raise ValueError("no sequence has a value at the last layer")
    return float(column.mean())


def _null_units(rows: dict, last_only: bool) -> dict[str, np.ndarray]:
    """The per-sequence arrays the null comparisons resample: evidence metrics [S, L] (wind tunnels)
    and the attention entropy of the rows focusing reads [S, L, H]."""
    from geomprobe.analysis.qk_alignment import per_sequence_metrics

    units = {"focusing": attention_entropy_bits(rows["probs"][_focus_rows(rows, last_only)])}
    if rows.get("evidence") is not None:
        metrics = per_sequence_metrics(rows["probs"], rows["cosine"], rows["visible"], rows["evidence"],
                                       rows["sequence"])
        units["evidence_mass"] = metrics["evidence_mass"]
        units["cos_evidence_minus_other"] = metrics["cos_evidence_minus_other"]
    return units


NULL_STATISTICS = {
    "evidence_mass": (_last_layer_mean, "attention mass on the evidence at the last layer (head-averaged)"),
    "cos_evidence_minus_other": (_last_layer_mean, "Q-K cosine, evidence keys minus the others, at the last layer"),
    "focusing": (None, "attention focusing 1 - H(L-1)/H(0)"),
}


def null_alignment(ctx, model_rows: dict, rows_of, last_only: bool) -> dict | None:
    """The same rows read from each untrained null model (geomprobe.nulls) on the same sequences,
    and the model's evidence mass, cosine contrast and focusing against theirs. None with --null off."""
    from geomprobe.analysis.null_comparison import compare_to_nulls, focusing_of, not_tested

    config = ctx.options
    specs = ctx.null_specs()
    if not specs:
        return None
    model_units = _null_units(model_rows, last_only)
    null_units, per_null = [], []
    tracker = ctx.sequential(specs)  # copies stop once no decision can change
    for name, (statistic, _) in NULL_STATISTICS.items():
        if name in model_units:
            try:
                tracker.watch(name, (statistic or focusing_of)(model_units[name]))
            except ValueError:
                tracker.watch(name, None)
    for index, (spec, copy) in enumerate(ctx.nulls(specs)):
        if tracker.settled():
            break
        rows = rows_of(copy)
        _save_sample(ctx.work / "nulls" / spec.name / "qk_rows.npz", rows)
        units = _null_units(rows, last_only)
        entry = {**spec.to_dict()}
        for name, (statistic, _) in NULL_STATISTICS.items():
            if name in units:
                try:
                    entry[name] = (statistic or focusing_of)(units[name])
                except ValueError as error:  # AnalysisError included
                    entry[f"{name}_note"] = str(error)
        entry["hbar_bits"] = [float(v) for v in np.nanmean(units["focusing"].mean(axis=2), axis=0)]
        if "evidence_mass" in units:
            entry["evidence_mass_by_layer"] = [None if not np.isfinite(v) else float(v)
                                               for v in np.nanmean(units["evidence_mass"], axis=0)]
        null_units.append(units)
        per_null.append(entry)
        for name in NULL_STATISTICS:
            if name in model_units:
                tracker.add(name, entry.get(name))
        if tracker.settled() and ctx.progress:
            print(f"mechanisms: copy {index + 1}/{len(specs)}: no decision can change now; the other copies are not "
                  "built (--no-null-stop builds them all)", flush=True)
    comparisons = {}
    for name, (statistic, label) in NULL_STATISTICS.items():
        if name not in model_units:
            continue
        try:
            comparisons[name] = compare_to_nulls(statistic or focusing_of, model_units[name],
                                                 [units[name] for units in null_units], unit="sequences", name=label,
                                                 sequential=tracker.record(name))
        except ValueError as error:
            comparisons[name] = not_tested(label, str(error))
    return {"spec": config.null, "description": ", ".join(spec.name for spec in specs), "models": per_null,
            "comparisons": comparisons, "copies": tracker.summary(),
            "note": "the same sequences read from untrained copies of the same architecture; the model's value "
                    "is ranked among the copies' (geomprobe.analysis.null_comparison: exchangeability test)"}


def frame_results(loaded, task, config, seed: int) -> dict:
    """Layer-0 token-key orthogonality of each frame-token group with its baselines."""
    from geomprobe.mechanisms import fresh_model, layer0_token_keys
    from geomprobe.windtunnel.evidence import frame_token_groups

    groups = frame_token_groups(task)
    ordinary = np.arange(len(task.vocab))[3:]  # every token but <bos>, <pad>, <unk>
    pool = layer0_token_keys(loaded, ordinary)
    fresh = [fresh_model(loaded, seed=seed + s) for s in range(config.init_seeds)]
    out = {}
    for name, ids in groups.items():
        init = [layer0_token_keys(model, ids) for model in fresh]
        out[name] = {"tokens": [task.vocab[int(i)] for i in ids],
                     **frame_orthogonality(layer0_token_keys(loaded, ids), pool, init=init, seed=seed)}
    return {"layer": 0, "headline": next(iter(groups)), "groups": out, "init_seeds": config.init_seeds,
            "keys": "layer-0 keys of single tokens, W_K norm(E x) + b_K per head (the full pre-attention norm, "
                    "before rotary), centred on each head's mean key over the group (a shift shared by the group "
                    "adds the same score to each of its keys, so it cannot tell hypotheses apart; `raw` is the "
                    "uncentred value), every baseline centred alike; orth = mean |cos| over distinct token pairs, "
                    "averaged over heads",
            "pool": "random_tokens draws from every ordinary token of the task vocabulary (specials excluded)",
            "reference": REF_FRAME}


def ablation_results(loaded, task, config, seed: int, progress: bool) -> dict:
    from geomprobe.mechanisms import ablation_scores

    scores = ablation_scores(loaded, task, n_eval=config.n_eval, n_reference=config.n_reference,
                             seed=seed, progress=progress)
    delta = [[entry["delta_mae_bits"] for entry in row] for row in scores["heads"]]
    largest = max(((layer, head, value) for layer, row in enumerate(delta) for head, value in enumerate(row)),
                  key=lambda item: item[2])
    skip = [entry["delta_mae_bits"] for entry in scores["skip_layer"]]
    return {**scores, "delta_mae_bits": delta,
            "all_heads_delta_mae_bits": [entry["delta_mae_bits"] for entry in scores["all_heads"]],
            "skip_layer_delta_mae_bits": skip,
            "largest_head": {"layer": largest[0], "head": largest[1], "delta_mae_bits": largest[2]},
            "largest_skip": {"layer": int(np.argmax(skip)), "delta_mae_bits": float(max(skip))},
            "layer0_heads": head_concentration(delta[0]),
            "n_eval": config.n_eval, "n_reference": config.n_reference, "eval_seed": 12345,
            "mean_ablation": "z of the head replaced by its mean over the reference sequences at the same position "
                             "(real tokens; the all-position mean beyond the reference's length)",
            "skip": "the block returns its input: attention and MLP removed, the residual passes through"}


def two_timescale_results(loaded, config) -> dict:
    """Paper II's frame-precision dissociation on the model's own checkpoints (reused, not redone)."""
    directory = Path(loaded.source)
    checkpoints = sorted((directory / "checkpoints").glob("step-*.pt"))
    if config.curves == "off":
        return {"skipped": "--curves off"}
    if not (directory / "metrics.json").exists() or len(checkpoints) < 2:
        return {"skipped": f"{directory} has no metrics.json and checkpoints (a `geomprobe windtunnel train` output)"}
    if (directory / "curves.json").exists():
        from geomprobe.readers import read_data

        curves, how = read_data(directory / "curves.json", "delete it: it is computed again from the checkpoints"), \
            f"read from {directory / 'curves.json'}"
    else:
        from geomprobe.windtunnel.dissociation import dissociation_curves

        n_probe, n_eval = min(128, config.n_sequences), min(512, config.n_eval)
        curves = dissociation_curves(directory, n_probe=n_probe, n_eval=n_eval)
        how = (f"computed by geomprobe.windtunnel.dissociation from {len(checkpoints)} checkpoints "
               f"({n_probe} probe sequences, {n_eval} evaluation sequences)")
    return {"source": str(directory), "how": how, "curves": curves, "settling": settling_steps(curves)}


def _task_prompts(task, batch) -> list[Prompt]:
    return [Prompt(id=f"{task.name}-{row:04d}", text=task.to_text(batch.tokens[row, 1:]), domain=task.name,
                   source="windtunnel") for row in range(len(batch))]


def _stages(enabled: bool):
    """stage(text): one line on stderr as each stage begins, with the seconds since the suite began
    (the suite's forwards, untrained copies and ablations run for tens of seconds each)."""
    import sys
    import time

    started = time.monotonic()

    def stage(text: str) -> None:
        if enabled:
            print(f"mechanisms: {text} ({time.monotonic() - started:.0f} s)", file=sys.stderr, flush=True)

    return stage


def run_mechanisms_suite(ctx) -> dict:
    from geomprobe.mechanisms import prompt_rows, windtunnel_rows

    config, loaded, seed = ctx.options, ctx.loaded, ctx.seed
    stage = _stages(ctx.progress)
    work = ctx.work
    task, info = windtunnel_task(loaded)
    results = {"shape": dict(loaded.adapter.shape.__dict__),
               "settings": {"n_sequences": config.n_sequences, "n_eval": config.n_eval,
                            "n_reference": config.n_reference, "init_seeds": config.init_seeds,
                            "n_boot": config.n_boot, "seed": seed, "curves": config.curves, "null": config.null},
               "windtunnel": info is not None, "reference": {"qk_alignment": REF_QK, "frame": REF_FRAME}}
    if task is not None:
        from geomprobe.windtunnel.evidence import evidence_definition

        batch = task.sample(config.n_sequences, np.random.default_rng([seed, 7]))
        source = f"windtunnel:{task.name} ({config.n_sequences} sampled sequences, seed [{seed}, 7])"
        ctx.record_prompts(_task_prompts(task, batch), source)
        results["task"] = {"name": task.name, "options": info.get("task_options", {}),
                           "evidence": evidence_definition(task), "sequences": source}
        batch_size = max(ctx.run.batch_size, 32)
        stage(f"query-key rows of {config.n_sequences} {task.name} sequences")
        rows = windtunnel_rows(loaded, task, batch, batch_size=batch_size)
        _save_sample(work / "qk_rows.npz", rows)
        results["qk_alignment"], results["attention_focusing"] = alignment_results(
            rows, config, seed, "every supervised position of each sequence", last_only=True)
        stage("the same on untrained copies")
        results["untrained_null"] = null_alignment(
            ctx, rows, lambda copy: windtunnel_rows(copy, task, batch, batch_size=batch_size), last_only=True)
        stage("layer-0 frame")
        results["frame"] = frame_results(loaded, task, config, seed)
        stage("head and layer ablations")
        results["ablation"] = ablation_results(loaded, task, config, seed, ctx.progress)
        stage("two timescales (frame vs precision over checkpoints)")
        results["two_timescale"] = two_timescale_results(loaded, config)
    if task is None or ctx.prompts:
        prompts, source = suite_prompts(ctx)
        if task is None:
            ctx.record_prompts(prompts, source)
        stage(f"query-key rows of {len(prompts)} prompts")
        rows = prompt_rows(loaded, prompts, batch_size=ctx.run.batch_size, max_tokens=ctx.run.max_tokens)
        qk, focusing = alignment_results(rows, config, seed, "each prompt's final token", last_only=False)
        entry = {"source": source, "n_prompts": len(prompts), "qk_alignment": qk, "attention_focusing": focusing}
        if task is None:
            _save_sample(work / "qk_rows.npz", rows)
            results.update(prompts={"source": source, "n": len(prompts)}, qk_alignment=qk,
                           attention_focusing=focusing)
            stage("the same on untrained copies")
            results["untrained_null"] = null_alignment(
                ctx, rows, lambda copy: prompt_rows(copy, prompts, batch_size=ctx.run.batch_size,
                                                    max_tokens=ctx.run.max_tokens), last_only=False)
        else:
            results["prompt_set"] = entry
    return ctx.write_results(results)


# --------------------------------------------------------------------------------------------
# the summary printed after a run


def _f(value, spec: str = ".3f") -> str:
    return "-" if value is None else format(value, spec)


def _ci(entry: dict, layer: int, spec: str = ".3f") -> str:
    value, ci = entry["value"][layer], entry["ci95"][layer]
    if value is None:
        return "-"
    return f"{value:{spec}} [{_f(ci[0], spec)}, {_f(ci[1], spec)}]" if ci[0] is not None else f"{value:{spec}}"


def print_summary(results: dict) -> None:
    console = table_console()
    _print_alignment(console, results)
    frame = results.get("frame")
    if frame:
        _print_frame(console, frame)
    ablation = results.get("ablation")
    if ablation:
        _print_ablation(console, ablation)
    timescale = results.get("two_timescale")
    if timescale:
        _print_timescale(console, timescale)


def _print_alignment(console, results: dict) -> None:
    """The Q-K alignment table per layer, the evidence share, attention focusing and the untrained copies."""
    from rich.table import Table

    qk = results["qk_alignment"]
    metrics = qk["metrics"]
    task = results.get("task") or {}
    title = (f"mechanisms: {results['model']}, Q-K alignment at {qk['rows']} ({qk['n_rows']} rows, "
             f"{qk['n_sequences']} sequences; head-averaged, 95% CI over sequences)")
    table = Table(title=title)
    columns = ["layer", "attn entropy (bits)", "normalised", "top weight", "cos mean", "cos max"]
    evidence = "evidence_mass" in metrics
    if evidence:
        columns += ["evidence mass", "cos evidence - other"]
    for column in columns:
        table.add_column(column, justify="right")
    for layer in range(qk["n_layers"]):
        row = [str(qk["layers"][layer]), _ci(metrics["attn_entropy_bits"], layer),
               _f(metrics["attn_entropy_normalised"]["value"][layer]), _f(metrics["top_weight"]["value"][layer]),
               _f(metrics["cos_mean"]["value"][layer], "+.3f"), _f(metrics["cos_max"]["value"][layer], "+.3f")]
        if evidence:
            row += [_ci(metrics["evidence_mass"], layer),
                    _f(metrics["cos_evidence_minus_other"]["value"][layer], "+.3f")]
        table.add_row(*row)
    console.print(table)
    if evidence:
        console.print(f"evidence ({task.get('name')}): {task.get('evidence')}; a uniform row would put "
                      f"{_f(qk['evidence_uniform_share'])} of its mass there", markup=False)
    focus = results.get("attention_focusing") or {}
    if focus.get("focusing") is not None:
        console.print(f"attention focusing 1 - H(L-1)/H(0) at {focus['rows']}: {focus['focusing']:.3f} "
                      f"[{_f(focus['focusing_ci95'][0])}, {_f(focus['focusing_ci95'][1])}]", markup=False)
    nulls = results.get("untrained_null")
    if nulls:
        from geomprobe.analysis.null_comparison import comparison_text

        for cmp in nulls["comparisons"].values():
            console.print(f"against untrained copies ({nulls['description']}), {cmp['statistic']}: "
                          f"{comparison_text(cmp)}", markup=False)


def _print_frame(console, frame: dict) -> None:
    """The layer-0 hypothesis frame: token-key orthogonality against its baselines, per token group."""
    from rich.table import Table

    table = Table(title=f"layer-0 hypothesis frame: token-key orthogonality (mean |cos|), {REF_FRAME}")
    for column in ("tokens", "n", "d_head", "trained (centred)", "raw", "analytic Gaussian", "Gaussian",
                   "shuffled", "random tokens", "fresh init"):
        table.add_column(column, justify="right")

    def spread(entry):
        return "-" if entry is None else f"{entry['mean']:.3f} [{entry['p05']:.3f}, {entry['p95']:.3f}]"

    for name, group in frame["groups"].items():
        base = group["baselines"]
        table.add_row(name, str(group["n_tokens"]), str(group["d_head"]), f"{group['orth']:.3f}",
                      f"{group['raw']:.3f}", f"{base['analytic_gaussian']:.3f}", spread(base.get("gaussian")),
                      spread(base.get("shuffled")), spread(base.get("random_tokens")),
                      _f((base.get("init") or {}).get("mean")))
    console.print(table)


def _print_ablation(console, ablation: dict) -> None:
    """The head and layer ablations' changes in held-out entropy MAE, and the reading of layer 0's heads."""
    from rich.table import Table

    n_heads = len(ablation["delta_mae_bits"][0])
    base = ablation["baseline"]
    table = Table(title=(f"ablations: change in held-out entropy MAE (bits) against {base['entropy_mae_bits']:.4f} "
                         f"unablated ({ablation['n_eval']} sequences; context-blind "
                         f"{ablation['context_blind']['entropy_mae_bits']:.3f})"))
    for column in ["layer"] + [f"head {h}" for h in range(n_heads)] + ["all heads", "skip layer"]:
        table.add_column(column, justify="right")
    for layer, row in enumerate(ablation["delta_mae_bits"]):
        table.add_row(str(layer), *[f"{v:+.4f}" for v in row],
                      f"{ablation['all_heads_delta_mae_bits'][layer]:+.4f}",
                      f"{ablation['skip_layer_delta_mae_bits'][layer]:+.4f}")
    console.print(table)
    first = ablation["layer0_heads"]
    console.print(f"layer 0: {first['reading']}; head {first['top_head']} raises the MAE most "
                  f"({first['top_delta_mae_bits']:+.4f} bits, {_f(first['share_of_total'], '.0%')} of the "
                  f"layer-0 increases)", markup=False)


def _print_timescale(console, timescale: dict) -> None:
    """The two timescales' settling steps over the checkpoints, or why they were skipped."""
    if "skipped" in timescale:
        console.print(f"two timescales: skipped ({timescale['skipped']})", markup=False)
        return
    settle = timescale["settling"]
    steps = settle["settling_step"]
    console.print(f"two timescales ({timescale['how']}): settled (within {settle['fraction']:g} of the "
                  f"final value for good) at step: attention {steps['attention_distance_mean']}, value PC1 "
                  f"{steps['pc1']}, |rho(PC1, H_bayes)| {steps['abs_rho_pc1_bayes_entropy']}, entropy MAE "
                  f"{steps['entropy_mae_bits']} (log10 scale {steps['entropy_mae_log10']}), of "
                  f"{settle['final_step']}", markup=False)

register_suite("mechanisms", MechanismsConfig, run_mechanisms_suite,
               "Q-K alignment, the layer-0 hypothesis frame, head/layer ablations and two timescales (papers I, II)",
               schema=MechanismsResults, schema_version=SCHEMA_VERSION, summary=print_summary)
