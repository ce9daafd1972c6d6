"""The SULA task's prompts as the planner counts them (their token lengths per condition, and the
targets they cannot run on), shared by every suite that runs them: the sula suite and the
ablation, whose plan faces both read this, so neither imports the other."""

from __future__ import annotations

from geomprobe.sula_task import (
    CARRIER_POOL,
    K0_TEMPLATE,
    LABEL_CANDIDATES,
    MASK_TOKEN,
    WINDTUNNEL_K0_TEMPLATE,
    SulaSpec,
    choose_labels,
    generate,
)

from .context import PlanContext
from .tokens import Lengths

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
