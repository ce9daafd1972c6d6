"""The mechanisms suite's cost model (geomprobe.plan): the Q-K rows of every layer (a wind tunnel's
task sequences, or the final token of the run's prompts), and on a wind tunnel the head means, the
head and layer ablations over held-out sequences and the two-timescales checkpoints."""

from __future__ import annotations

from pathlib import Path

from geomprobe.plan import DTYPE_BYTES, Lengths, Passes, PlanContext, SuitePlan, register_planner


def plan_mechanisms(ctx: PlanContext, options) -> SuitePlan:
    out = SuitePlan("mechanisms")
    a = ctx.arch
    nulls = ctx.null_loads(ctx.nulls(options, "mechanisms"), DTYPE_BYTES[ctx.run.dtype])
    task = ctx.task
    if task is not None:
        sequences = Lengths(options.n_sequences, float(task.seq_len), int(task.seq_len), "exact (task length)")
        rows_batch = max(ctx.batch, 32)
        out.sweeps.append(Passes(f"Q-K rows: {options.n_sequences} task sequences", sequences, rows_batch, layers=a.n_layers,
                                readout_width=a.n_heads * task.seq_len * 2))
        for load in nulls:
            out.loads.append(load)
            out.sweeps.append(Passes(f"{load.what}: Q-K rows", sequences, rows_batch, layers=a.n_layers,
                                    readout_width=a.n_heads * task.seq_len * 2, on="null"))
        if options.init_seeds:
            out.notes.append(f"layer-0 frame: {options.init_seeds} fresh copies (layer-0 keys of single tokens; small)")
        reference = Lengths(options.n_reference, float(task.seq_len), int(task.seq_len), "exact (task length)")
        evaluation = Lengths(options.n_eval, float(task.seq_len), int(task.seq_len), "exact (task length)")
        out.sweeps.append(Passes(f"head means: {options.n_reference} reference sequences", reference, 64))
        n_ablations = a.n_layers * a.n_heads + 2 * a.n_layers
        out.sweeps.append(Passes(f"ablations: 1 unablated + {a.n_layers} layers x ({a.n_heads} heads + all heads + "
                                f"skip) over {options.n_eval} held-out sequences", evaluation, 256,
                                repeat=1 + n_ablations, full_logits=True))
        wt = ctx.target.windtunnel
        directory = Path(wt["dir"])
        checkpoints = sorted((directory / "checkpoints").glob("step-*.pt")) if wt["cached"] else []
        if options.curves == "off":
            out.notes.append("two timescales: --curves off")
        elif (directory / "curves.json").exists():
            out.notes.append("two timescales: read from curves.json")
        elif len(checkpoints) >= 2:
            probe = Lengths(min(128, options.n_sequences), float(task.seq_len), int(task.seq_len), "exact")
            held = Lengths(min(512, options.n_eval), float(task.seq_len), int(task.seq_len), "exact")
            out.sweeps.append(Passes(f"two timescales: {len(checkpoints)} checkpoints x probe sequences", probe, 64,
                                    repeat=len(checkpoints)))
            out.sweeps.append(Passes(f"two timescales: {len(checkpoints)} checkpoints x held-out sequences", held, 256,
                                    repeat=len(checkpoints), full_logits=True))
        else:
            out.notes.append("two timescales: checkpoints counted once the wind tunnel is trained")
    if task is None or ctx.run.prompts:
        lengths, source = ctx.default_prompts()
        if task is not None:
            from geomprobe.prompts import prompts_label

            lengths, source = ctx.user_prompts(), prompts_label(ctx.run.prompts)
        out.sweeps.append(Passes(f"Q-K rows at the final token ({source})", lengths, ctx.batch, layers=a.n_layers,
                                readout_width=a.n_heads * lengths.max * 2))
        if task is None:
            for load in nulls:
                out.loads.append(load)
                out.sweeps.append(Passes(f"{load.what}: Q-K rows", lengths, ctx.batch, layers=a.n_layers,
                                        readout_width=a.n_heads * lengths.max * 2, on="null"))
    return out



register_planner("mechanisms", plan_mechanisms)
