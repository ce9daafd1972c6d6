"""The geometry suite's cost model (geomprobe.plan): candidate scoring, the chosen sample, and the
same for each untrained null copy; manifold_sets is shared with the domain suite's."""

from __future__ import annotations

from geomprobe.plan import DTYPE_BYTES, Lengths, Load, Passes, PlanContext, SuitePlan, corpus_texts, register_planner
from geomprobe.suites.geometry import N_WINDTUNNEL_CANDIDATES


def manifold_sets(ctx: PlanContext, options, suite: str, corpus: str, label: str, layers_all: bool) -> tuple:
    """Candidate scoring and the chosen sample of one prompt set (geometry.stratified_prompts)."""
    if suite == "geometry":
        candidates, source = ctx.default_prompts(N_WINDTUNNEL_CANDIDATES, corpus)
    else:
        candidates, source = ctx.counter.lengths(corpus_texts(corpus)), f"corpus:{corpus}"
    sweeps, notes = [], []
    readouts = (*ctx.run.readouts, options.readout)
    layers = ctx.layers(ctx.run.layers) if layers_all else 1
    if options.n_per_quintile == 0:
        chosen = candidates
    else:
        n = min(candidates.n, 5 * options.n_per_quintile)
        if ctx.arch.causal and options.sample == "entropy":  # --sample length: drawn from the token counts alone
            sweeps.append(Passes(f"{label}candidates ({source}): next-token entropy", candidates, ctx.batch, layers=1,
                                readout_width=ctx.arch.n_heads))
        if candidates.n < 5 * options.n_per_quintile:
            notes.append(f"{source} has {candidates.n} candidates, fewer than 5 x --n-per-quintile "
                         f"{options.n_per_quintile}: the suite will refuse it")
        chosen = Lengths(n, candidates.mean, candidates.max, candidates.how)  # a stratified draw: same lengths
    if options.max_per_final_token:
        notes.append("--max-per-final-token drops candidates before sampling (not counted here)")
    sweeps.append(Passes(f"{label}chosen sample ({chosen.n} prompts)", chosen, ctx.batch, layers=layers,
                        readout_width=ctx.readout_width(readouts)))
    return sweeps, chosen, notes


def plan_geometry(ctx: PlanContext, options) -> SuitePlan:
    out = SuitePlan("geometry")
    sweeps, chosen, notes = manifold_sets(ctx, options, "geometry", options.corpus, "", True)
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
