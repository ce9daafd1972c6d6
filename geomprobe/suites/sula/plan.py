"""The sula suite's cost model (geomprobe.plan): one sweep per condition, the main condition again
on each untrained null copy. The prompts' lengths and the targets they cannot run on are
geomprobe.plan.sula_task's, which the ablation's planner reads too."""

from __future__ import annotations

from geomprobe.plan import DTYPE_BYTES, Passes, PlanContext, SuitePlan, register_planner
from geomprobe.plan.sula_task import sula_lengths, sula_unsupported
from geomprobe.sula_task import CONTROLS


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
