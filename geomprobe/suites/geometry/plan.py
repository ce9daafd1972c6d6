"""The geometry suite's cost model (geomprobe.plan): candidate scoring, the chosen sample, and the
same for each untrained null copy (the sample's passes: geomprobe.plan.manifold_sample, which the
domain suite's planner reads too)."""

from __future__ import annotations

from geomprobe.plan import DTYPE_BYTES, Load, Passes, PlanContext, SuitePlan, register_planner
from geomprobe.plan.manifold_sample import manifold_sets


def plan_geometry(ctx: PlanContext, options) -> SuitePlan:
    out = SuitePlan("geometry")
    sweeps, chosen, notes = manifold_sets(ctx, options, True, options.corpus, "", True)
    out.sweeps += sweeps
    out.notes += notes
    nulls = ctx.nulls(options, "geometry")
    b = DTYPE_BYTES[ctx.run.dtype]
    scoring = [sweep for sweep in sweeps if "next-token entropy" in sweep.what]
    for load in ctx.null_loads(nulls, b):
        out.loads.append(load)
        for sweep in scoring:  # each null draws its own stratified sample: it scores the candidates too
            out.sweeps.append(Passes(f"{load.what}: {sweep.what}", sweep.lengths, ctx.batch, layers=1,
                                    readout_width=ctx.arch.n_heads, on="null"))
        sample = "its own sample" if scoring else "the model's sample"
        out.sweeps.append(Passes(f"{load.what}: {sample}", chosen, ctx.batch, layers=ctx.arch.n_layers,
                                readout_width=ctx.readout_width((*ctx.run.readouts, options.readout)), on="null"))
    if options.init_seeds:
        out.notes.append(f"key baseline: {options.init_seeds} fresh initialisations of 2 layers at a 512-token "
                         "vocabulary (small)")
    if options.step0 != "off" and (options.step0 != "auto" or ctx.target.pythia):
        spec = options.step0 if options.step0 != "auto" else f"{ctx.target.hub_id or ctx.target.name}@step0"
        out.loads.append(Load(f"step0 key baseline ({spec})", "checkpoint", ctx.arch.n_params, ctx.arch.n_params * 4,
                              "cpu", "float32 on the CPU for its W_K; unavailable offline unless cached (then noted, "
                                     "not fatal)"))
    return out


register_planner("geometry", plan_geometry)
