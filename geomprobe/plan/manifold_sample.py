"""The value-manifold sample as the planner counts it: candidate scoring and the chosen sample of
one prompt set (geomprobe.suites.sampling), shared by every suite that draws one: the geometry
suite and the domain suite, whose plan faces both read this, so neither imports the other."""

from __future__ import annotations

from geomprobe.suites.sampling import N_WINDTUNNEL_CANDIDATES

from .context import Passes, PlanContext
from .tokens import Lengths, corpus_texts


def manifold_sets(ctx: PlanContext, options, default_prompts: bool, corpus: str, label: str,
                  layers_all: bool) -> tuple:
    """(passes, chosen lengths, notes): candidate scoring and the chosen sample of one prompt set
    (geomprobe.suites.sampling.stratified_prompts). default_prompts: the candidates are what a run
    reads by default (--prompts, a wind tunnel's task, else `corpus`), not the named corpus alone."""
    if default_prompts:
        candidates, source = ctx.default_prompts(N_WINDTUNNEL_CANDIDATES, corpus)
    else:
        candidates, source = ctx.counter.lengths(ctx.limited(corpus_texts(corpus))), f"corpus:{corpus}"
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
