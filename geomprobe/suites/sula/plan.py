"""The sula suite's cost model (geomprobe.plan): one sweep per condition, the main condition again
on each untrained null copy. sula_lengths and sula_unsupported are shared with the ablation
suite's planner, which runs on the same prompts."""

from __future__ import annotations

from geomprobe.plan import DTYPE_BYTES, Lengths, Passes, PlanContext, SuitePlan, register_planner
from geomprobe.sula_task import (
    CARRIER_POOL,
    CONTROLS,
    K0_TEMPLATE,
    LABEL_CANDIDATES,
    MASK_TOKEN,
    WINDTUNNEL_K0_TEMPLATE,
    SulaSpec,
    choose_labels,
    generate,
)

SULA_SAMPLE = 24  # prompts per k generated to measure lengths (the run's first ones: seeded per k)


def sula_lengths(ctx: PlanContext, options, conditions: list[str]) -> dict[str, Lengths]:
    """Lengths of each condition's prompts, from the first SULA_SAMPLE prompts of every k (the
    generator is seeded per k, trial by trial, so these are the run's own first prompts)."""
    task = ctx.task
    carriers, k0, candidates = CARRIER_POOL, K0_TEMPLATE, LABEL_CANDIDATES
    if task is not None:
        carriers, k0, candidates = tuple(task.carrier_words), WINDTUNNEL_K0_TEMPLATE, tuple(task.label_words)
    if ctx.tokenizer is not None and task is None:
        choice = choose_labels(ctx.tokenizer, labels=None if options.labels is None else list(options.labels),
                               candidates=candidates, exclude=set(carriers) | {MASK_TOKEN}, context=f"{carriers[0]}:")
        main, remap = choice.main, choice.remap
    else:
        words = [w for w in candidates if w not in (options.labels or ())]
        main = tuple(options.labels) if options.labels is not None else tuple(words[:2])
        rest = [w for w in words if w not in main]
        remap = tuple(rest[:2]) if len(rest) >= 2 else None
    spec = SulaSpec(labels=main, remap_labels=remap, k_values=tuple(options.k_values),
                    n_per_k=max(2, min(options.n_per_k, SULA_SAMPLE)), alpha=options.alpha, target=options.target,
                    carriers=carriers, template=options.template, k0_template=k0, seed=ctx.run.seed)
    wanted = [c for c in conditions if c != "lexical_remap" or remap is not None]
    prompts = generate(spec, wanted)
    n = options.n_per_k * len(options.k_values)
    out = {}
    for condition, records in prompts.items():
        per_k: dict[int, list[int]] = {}
        for record in records:
            per_k.setdefault(record.k, []).append(ctx.counter.count(record.text))
        mean = sum(options.n_per_k * sum(v) / len(v) for v in per_k.values()) / n
        out[condition] = Lengths(n, mean, max(max(v) for v in per_k.values()), ctx.counter.how)
    return out


def sula_unsupported(ctx: PlanContext, suite: str) -> str | None:
    """Why `suite` (sula, or ablation on the same prompts) cannot run on this target, or None."""
    if ctx.run.prompts:
        return f"the {suite} suite writes its own prompts: drop --prompts"
    if ctx.task is not None and ctx.task.name != "sula":
        return f"the {suite} suite needs a language model or windtunnel-sula; this is a '{ctx.task.name}' wind tunnel"
    if not ctx.arch.causal:
        return f"{ctx.target.spec} is an encoder: the {suite} suite needs next-token probabilities"
    return None


def plan_sula(ctx: PlanContext, options) -> SuitePlan:
    out = SuitePlan("sula")
    why = sula_unsupported(ctx, "sula")
    if why:
        out.skipped = why
        return out
    controls = [c for c in CONTROLS if c in options.controls]
    lengths = sula_lengths(ctx, options, ["main", *controls])
    if "lexical_remap" in controls and "lexical_remap" not in lengths:
        out.notes.append("lexical_remap skipped: only one label pair qualifies")
    if ctx.tokenizer is None and ctx.task is None:
        out.notes.append("labels assumed: the first candidates (dax, lug; remap wug, kep); the run picks single "
                         "tokens of the model's tokenizer")
    width = ctx.readout_width((*ctx.run.readouts, options.readout))
    main_layers = ctx.arch.n_layers if ctx.run.layers is None else len(set(ctx.run.layers) | {ctx.arch.n_layers - 1})
    k = len(options.k_values)
    for condition, length in lengths.items():
        out.sweeps.append(Passes(f"condition {condition} ({k} k x {options.n_per_k})", length, ctx.batch,
                                layers=main_layers if condition == "main" else 1, readout_width=width))
    for load in ctx.null_loads(ctx.nulls(options, "sula"), DTYPE_BYTES[ctx.run.dtype]):
        out.loads.append(load)
        out.sweeps.append(Passes(f"{load.what}: condition main", lengths["main"], ctx.batch, layers=1,
                                readout_width=width, on="null"))
    return out


register_planner("sula", plan_sula)
