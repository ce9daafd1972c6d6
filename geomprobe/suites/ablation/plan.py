"""The ablation suite's cost model (geomprobe.plan): the axis fit on the SULA main condition
(skipped when the sula suite of the same plan fits the same axes), the matched controls, the
baseline and the edited conditions at the share of the blocks prefix reuse runs, and all of it
again on each untrained null copy. The prompts are the sula suite's (geomprobe.plan.sula_task)."""

from __future__ import annotations

from geomprobe.errors import ConfigError
from geomprobe.families import released_fused_qkv
from geomprobe.nulls import specs_text
from geomprobe.options import fields_of
from geomprobe.plan import DTYPE_BYTES, Passes, PlanContext, SuitePlan, register_planner
from geomprobe.plan.sula_task import sula_lengths, sula_unsupported
from geomprobe.suites.ablation.conditions import (
    check_depth,
    default_layer_sets,
    measured_layers,
    named_layer_sets,
    parse_ops,
    without_layers,
)
from geomprobe.suites.entropy_axis import SulaPromptOptions


def ablation_layer_sets(ctx: PlanContext, template: str | None, edit_layers=None) -> tuple[list, list[str]]:
    """The layer sets the ablation suite will edit (geomprobe.suites.ablation): --edit-layers, else paper
    III's by depth; layer 0 left out where the SULA prompts all end in the same token (the default
    templates end in ':'), since a rotary model's layer-0 values at a fixed final token do not vary
    and so have no axis. Assumes every other layer has one."""
    n_layers = ctx.arch.n_layers
    notes = []
    if edit_layers is None:
        sets = default_layer_sets(n_layers)
    else:
        check_depth(n_layers)
        chosen = sorted({layer if layer >= 0 else n_layers + layer for layer in edit_layers})
        if chosen[-1] >= n_layers - 1:
            raise ConfigError(f"ablation suite: --edit-layers includes the last layer ({n_layers - 1}): choose layers "
                              f"from 0 to {n_layers - 2}")
        sets = named_layer_sets(chosen, chosen)
    fixed_final = template is None or not template.rstrip().endswith("{query}")
    if fixed_final and ctx.arch.causal:
        if edit_layers is not None and 0 in edit_layers:
            notes.append("layer 0 has no entropy axis on these prompts (they all end in the same token): the suite "
                         "will refuse --edit-layers with 0")
        sets = without_layers(sets, {0})
        notes.append("layer 0 left out (its final-token values do not vary: every prompt ends in ':'); every other "
                     "layer is assumed to have an axis")
    return [(name, layers) for name, layers in sets if max(layers) < n_layers - 1], notes


def _same_sula_prompts(a, b) -> bool:
    return all(getattr(a, f.name) == getattr(b, f.name) for f, _ in fields_of(SulaPromptOptions) if f.name != "n_boot")


def plan_ablation(ctx: PlanContext, options, sula_options=None) -> SuitePlan:
    """sula_options: the sula suite's config, whose axes the ablation reuses when it has the same
    prompt settings (default: the sula suite of the same plan, ctx.config_of("sula"), if any)."""
    if sula_options is None:
        sula_options = ctx.config_of("sula")
    out = SuitePlan("ablation")
    why = sula_unsupported(ctx, "ablation") or (
        None if ctx.run.backend == "hf" else "the ablation suite edits values through geomprobe's own hooks: "
                                             "use --backend hf")
    if why:
        out.skipped = why
        return out
    operations = parse_ops(options.ops, options.cut_lambda)
    sets, notes = ablation_layer_sets(ctx, options.template, options.edit_layers)
    out.notes += notes
    if not sets:
        out.skipped = "no layer set below the last layer keeps an entropy axis: the suite cannot run on this model"
        return out
    lengths = sula_lengths(ctx, options, ["main"])["main"]
    needed = measured_layers(sets, ctx.arch.n_layers)
    width = ctx.readout_width(("values",))
    reused = (sula_options is not None and sula_options.readout == "values" and _same_sula_prompts(options, sula_options)
              and (ctx.run.layers is None or set(needed) <= set(ctx.run.layers) | {ctx.arch.n_layers - 1}))
    if reused:
        out.notes.append("axes reused from the sula suite of this run (same prompt settings)")
    else:
        main_layers = sorted(set(needed) | {ctx.arch.n_layers - 1})
        out.sweeps.append(Passes(f"axis fit: SULA main condition ({len(options.k_values)} k x {options.n_per_k})",
                                lengths, ctx.batch, layers=len(main_layers), readout_width=width))
        out.notes.append("axis fit skipped when a finished sula suite in the run directory used the same settings")
    n_conditions = len(operations) * len(sets) * (1 + options.n_random)
    blocks, how = ablation_blocks(ctx, sets, len(operations) * (1 + options.n_random), lengths.n)
    out.notes.append(how)
    conditions = (f"conditions: {len(operations)} ops ({', '.join(n for n, _, _ in operations)}) x {len(sets)} layer "
                  f"sets ({', '.join(n for n, _ in sets)}) x (1 true + {options.n_random} "
                  f"{'matched' if getattr(options, 'definitions', 'geomprobe') == 'geomprobe' else 'released'} "
                  f"random axes)")

    edited = sorted({layer for _, layers in sets for layer in layers})
    released = getattr(options, "definitions", "geomprobe") == "paper-code-as-released"
    released_split = released and released_fused_qkv(ctx.arch.model_type)

    def passes(prefix: str, on: str) -> list[Passes]:
        """The controls' attention read (or the released value split's final-token values, one pass per
        edited layer), the baseline and the conditions of one model."""
        setup = [] if released_split else [
            Passes(f"{prefix}matched controls: the attention read at the edited layers (unedited)", lengths, ctx.batch,
                  layers=len(needed), readout_width=width, on=on)]
        if released:
            setup.append(Passes(f"{prefix}the released value split at the final token, one pass per edited layer",
                               lengths, ctx.batch, repeat=len(edited), layers=1, readout_width=width, on=on))
        return [*setup,
                Passes(f"{prefix}baseline (unedited)", lengths, ctx.batch, layers=len(needed), readout_width=width,
                      on=on),
                Passes(f"{prefix}{conditions}", lengths, ctx.batch, repeat=n_conditions, layers=len(needed),
                      readout_width=width, blocks=blocks, on=on)]

    out.sweeps += passes("", "model")
    main_layers = sorted(set(needed) | {ctx.arch.n_layers - 1})
    for load in ctx.null_loads(ctx.nulls(options, "ablation"), DTYPE_BYTES[ctx.run.dtype]):
        out.loads.append(load)
        out.sweeps.append(Passes(f"{load.what}: its own axis fit, SULA main condition", lengths, ctx.batch,
                                layers=len(main_layers), readout_width=width, on="null"))
        out.sweeps += passes(f"{load.what}: ", "null")
    null_text = specs_text(options.null_specs(n_params=ctx.arch.n_params))  # how auto reads, for the note
    if null_text != (options.null or "").strip() and null_text:
        out.notes.append(f"--null {options.null}: {null_text} (the ablation's count from the model's "
                         f"{ctx.arch.n_params / 1e6:.0f}M parameters; each copy runs every condition)")
    return out


def ablation_blocks(ctx: PlanContext, sets, per_set: int, n_prompts: int) -> tuple[float, str]:
    """(the share of the decoder blocks an edited pass runs on average, how): with prefix reuse
    (geomprobe.prefix) the passes whose first edited layer is l0 run blocks l0..L-1, the blocks
    below the highest l0 run once per batch (the state moved up group to group), and each group
    checks its first batch against a full pass; 1.0 where the suite will run full passes."""
    from geomprobe.prefix import PROVEN, enabled

    L = ctx.arch.n_layers
    why = ("turned off (GEOMPROBE_PREFIX_REUSE)" if not enabled() else
           f"not proven for model type '{ctx.arch.model_type}'" if ctx.arch.model_type not in PROVEN else
           "--device-map dispatches the model over devices" if ctx.run.device_map is not None else None)
    if why is not None:
        return 1.0, f"edited passes: full forward passes ({why})"
    starts: dict[int, int] = {}
    for _, layers in sets:
        starts[min(layers)] = starts.get(min(layers), 0) + per_set
    n_passes = sum(starts.values())
    batches = max(1, -(-n_prompts // ctx.batch))
    runs = sum(n * (L - l0) for l0, n in starts.items())  # block runs, in passes
    prefix = max(starts)  # the blocks below the highest first edited layer, once
    checks = sum(L + (L - l0) for l0 in starts) / batches  # one batch of a full pass and of the run from l0
    share = (runs + prefix + checks) / (n_passes * L)
    return share, (f"edited passes: prefix reuse, {share:.3f} of a full pass each on average (first edited layers "
                   f"{', '.join(map(str, sorted(starts)))} of {L}; the blocks below run once per batch)")


register_planner("ablation", plan_ablation)
