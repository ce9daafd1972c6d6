"""The extract suite's cost model (geomprobe.plan): one extraction sweep over the run's prompts."""

from __future__ import annotations

from geomprobe.plan import Passes, PlanContext, SuitePlan, register_planner


def plan_extract(ctx: PlanContext, options) -> SuitePlan:
    out = SuitePlan("extract")
    lengths, source = ctx.default_prompts()
    out.sweeps.append(Passes(f"extraction ({source})", lengths, ctx.batch, layers=ctx.layers(ctx.run.layers),
                            readout_width=ctx.readout_width(ctx.run.readouts)))
    return out


register_planner("extract", plan_extract)
