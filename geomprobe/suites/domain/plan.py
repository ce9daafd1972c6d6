"""The domain suite's cost model (geomprobe.plan): the geometry suite's candidate scoring and chosen
sample (geomprobe.plan.manifold_sample.manifold_sets) for the mixed corpus and each domain, and
the same for each untrained null copy."""

from __future__ import annotations

from geomprobe.plan import DTYPE_BYTES, Passes, PlanContext, SuitePlan, register_planner
from geomprobe.plan.manifold_sample import manifold_sets


def plan_domain(ctx: PlanContext, options) -> SuitePlan:
    out = SuitePlan("domain")
    if ctx.task is not None:
        out.skipped = "the domain suite compares natural-language corpora; a wind tunnel only reads its own task"
        return out
    if ctx.run.prompts:
        out.skipped = "the domain suite uses the built-in corpora (--corpus and --domains), not --prompts"
        return out
    chosen = {}
    for label, corpus in {"mixed": options.corpus, **{d: d for d in options.domains}}.items():
        sweeps, chosen[label], notes = manifold_sets(ctx, options, False, corpus, f"{label}: ", False)
        out.sweeps += sweeps
        out.notes += notes
    nulls = ctx.nulls(options, "domain")
    scoring = [sweep for sweep in out.sweeps if "next-token entropy" in sweep.what]
    for load in ctx.null_loads(nulls, DTYPE_BYTES[ctx.run.dtype]):
        out.loads.append(load)
        for sweep in scoring:  # each null draws its own samples: it scores every corpus too
            out.sweeps.append(Passes(f"{load.what}: {sweep.what}", sweep.lengths, ctx.batch, layers=1,
                                    readout_width=ctx.arch.n_heads, on="null"))
        for label, lengths in chosen.items():
            out.sweeps.append(Passes(f"{load.what}: {label} sample", lengths, ctx.batch, layers=1,
                                    readout_width=ctx.readout_width((*ctx.run.readouts, options.readout)), on="null"))
    return out


register_planner("domain", plan_domain)
