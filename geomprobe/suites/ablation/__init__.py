"""The `ablation` suite: entropy-axis interventions against random axes (METHODS.md section 8).

1. Prompts: the SULA main condition (geomprobe.suites.entropy_axis.sula_setup, the sula settings of the
   RunConfig; --n-per-k defaults to 100 here, 250 in the sula suite).
2. Axis per layer: PC1 of the standardised final-token values over those prompts, oriented so that
   the Spearman rho(z . u, H_model) >= 0 (sula_metrics.fit_axis), with its means, scales and
   sigma_u. Taken from <run>/sula/axis.npz when a finished sula suite there used the same settings
   and read values; otherwise the SULA main condition is extracted by the sula suite's own code into
   <run>/ablation/sula-main/. The axes used (the edited layers' and every later layer's) are saved
   to <run>/ablation/axis.npz (geomprobe.interventions.load_axes replays them), the random control
   axes to <run>/ablation/random_axes.npz.
3. Layer sets: each --edit-layers entry alone plus all of them together. By default paper III's
   Pythia-410M layers (single 12 and 23, multi 8, 12, 16, 20, 23 of 24) as fractions of depth,
   rounded half up and capped at n_layers - 2, so that at least one layer follows every set: 24
   layers give single 12 and 22, multi 8, 12, 16, 20, 22; 4 layers single 2, multi 1, 2; 3 layers
   (windtunnel-sula) single 1 and, since the fractions collapse there to one layer, multi 0, 1
   (layers 0 to n_layers - 2 whenever the fractions give fewer than two). A layer without an axis
   leaves its sets (on windtunnel-sula layer 0, whose final-token values do not vary, so only L1
   remains, measured at layer 2), and a default set with no later layer that has an axis is
   dropped (settings.dropped_sets). A model with one layer has nothing downstream and is refused,
   and so is an explicit --edit-layers that includes the last layer (its own set, and the multi set,
   would have no later layer to measure), with what to choose instead.
4. Controls (METHODS.md section 8.3): n_random matched random axes per edited layer (default 19, so
   the smallest empirical p is 1/20 = 0.05), unit directions from the values' own covariance over
   the main prompts, orthogonal to u, each op's edit along them scaled so that the displacement the
   edited layer's attention hands its output projection at the final token equals the true edit's
   (measured in one unedited pass, geomprobe.interventions.read_displacements); directions, sigma_r
   and gains in random_axes.npz and results.json's axis.controls.
   Passes, each one forward pass over the prompts through extraction with the value edit active
   (geomprobe.hooks.edit_values): the unperturbed baseline, then for every operation (cut, only,
   shift +1, shift -1) and layer set the true axis and the n_random controls. Each pass is cached in
   <run>/ablation/conditions/<name>.json, so a rerun skips finished ones. An edit changes nothing
   below its first edited layer l0, so the edited passes sharing l0 run blocks 0..l0-1 once per
   batch and then only blocks l0..L-1 each (geomprobe.prefix; the same numbers as full passes,
   checked against one on the first batch); where that is not proven (another model type, a
   model dispatched over devices, GEOMPROBE_PREFIX_REUSE=0, ...) they are full passes, and
   settings.prefix_reuse and prefix_reuse_note say which ran and why. The passes of one operation
   and layer set differ only in their axis (true and random), so from a prefix m of them can run
   in one call, each batch's state repeated m times along the batch and each chunk of rows edited
   by its own condition (SharedPrefix.extract_stacked; the pass files are the same within 1e-5,
   and only the passes not read back are stacked). m (settings.stacked_conditions, with
   stacked_conditions_note saying why; `stacked_conditions`) is GEOMPROBE_STACK_CONDITIONS when
   set, else 1 on a CPU (4 stacked measured 0.84x the time per condition, but stacked rows round
   differently, up to 3e-6 in float32, and one at a time keeps the numbers bit for bit those of
   full passes; GEOMPROBE_STACK_CONDITIONS=4 opts in) and on CUDA the memory planner's recommended
   batch over the rows of a call. Each group's first call is checked on the first batch against its
   conditions run one by one; a difference beyond prefix.STACK_TOLERANCE of the model's dtype (1e-5
   in float32), or any error, turns stacking off for the rest of the run (settings.stacked_groups
   says where and why).
5. Metrics against the baseline (geomprobe.analysis.ablation_metrics): the output (SULA MAE and
   Pearson(H_model, H_bayes), their changes, |change in H_model|), and the axis-entropy correlation
   rho(v'.u, H_model), Spearman like the orientation, re-extracted at every layer after the last
   edited one, each on that layer's own axis, reported per layer (never averaged over layers; the
   one summary is the mean |change|, labelled so), with where the true axis's change falls among
   the random ones (rank of n_random + 1, empirical p, smallest attainable p). The edited layers'
   own r is kept apart and labelled: a cut makes it 0 by construction, so it is no evidence.
6. One primary statistic per condition (ablation_metrics.PRIMARY): the true axis's mean |dH|
   against the controls', by its rank (within the model) and by log2(true / mean random) against
   untrained copies (--null, default auto = init:3 in this suite; geomprobe.nulls, one copy alive
   at a time), each copy running every condition on its own entropy axis, fitted on its own SULA
   main extraction (<run>/ablation/nulls/<name>/), with its own controls, judged by
   geomprobe.analysis.null_comparison.judge_against_nulls ("not tested" when it cannot be). The
   other rank tests are secondary, Holm-adjusted within the condition. "Behaviour changed" is
   beyond the copies' 95th percentile of the same change (the fixed READING_THRESHOLDS only with
   --null off, labelled). A one-line reading per condition names all of it;
   <run>/ablation/results.json.

The code, by stage: conditions.py (the operations and layer sets), axis.py (the entropy axes),
controls.py (the matched random axes), passes.py (the passes and their cache), nulls.py (the
untrained copies), summary.py (results.json from the passes) and console.py (the printed
summary); here the config, the run and its registration.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np

from geomprobe.analysis.ablation_metrics import AXIS_STATISTIC, PRIMARY, READING_THRESHOLDS, SECONDARY_NOTE
from geomprobe.errors import ConfigError
from geomprobe.extraction import ExtractionConfig
from geomprobe.sula_task import generate

from ..base import Definitions, NullOptions, definitions_option, option, register_suite
from ..entropy_axis import SulaPromptOptions, sula_setup
from ..entropy_axis import unsupported as sula_unsupported
from .axis import (  # noqa: F401  (re-exported)
    PAPER_CODE_EDITS,
    RELEASED_EDITS,
    _main_values,
    _released_what,
    _without_control,
    fit_axes,
    paper_code_axes,
    paper_code_randoms,
    released_edit,
    released_split,
    reusable_sula_axes,
)
from .conditions import (  # noqa: F401  (re-exported)
    PAPER_DEPTH,
    PAPER_MULTI,
    PAPER_SINGLE,
    check_depth,
    default_layer_sets,
    downstream_of,
    layer_sets,
    measured_layers,
    named_layer_sets,
    parse_ops,
    without_layers,
)
from .console import print_summary
from .controls import (  # noqa: F401  (re-exported)
    CONTROL_NOTE,
    CONTROL_VERSION,
    MAX_CONTROL_GAIN,
    control_axes,
    controls_summary,
    refused_control,
    refused_for,
    save_controls,
)
from .nulls import (  # noqa: F401  (re-exported)
    ABLATION_NULL_COUNTS,
    ablation_null_count,
    null_ablation,
    null_ablations,
    untrained_for,
)
from .passes import (  # noqa: F401  (re-exported)
    STACK_CPU_NOTE,
    PassRun,
    _common_key,
    _edit_setup,
    _one_pass,
    _Prefixes,
    _Stacking,
    run_passes,
    stacked_conditions,
)
from .results import SCHEMA_VERSION, AblationResults
from .summary import ONLY_UNCALIBRATED, summarise  # noqa: F401  (re-exported)

if TYPE_CHECKING:
    from geomprobe.interventions import InterventionAxis

# the hooks and interventions names this module once imported at module level, imported when asked
# for: `import geomprobe.suites` (the CLI builds its options from the registry) must not load torch
_LAZY = {"edit_values": "geomprobe.hooks", **{name: "geomprobe.interventions" for name in (
    "OPS", "InterventionAxis", "direction_sigmas", "load_axes", "make_editor", "matched_directions", "matched_gains",
    "read_displacements", "save_axes")}}


def __getattr__(name: str):
    if name in _LAZY:
        from importlib import import_module

        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass
class AblationConfig(SulaPromptOptions, NullOptions):
    """Entropy-axis interventions on the SULA main prompts (METHODS.md section 8). --edit-layers
    chooses the layers to intervene on."""

    # each condition is one pass over the prompts: fewer than the sula suite's 250 per k
    n_per_k: int = option(100, "prompts per number of examples k", min=2)
    ops: tuple[Literal["cut", "only", "shift"], ...] = option(
        ("cut", "only", "shift"), "comma-separated: cut (z - lambda (z.u) u), only ((z.u) u), shift (z +- sigma_u u; "
                                  "runs +1 and -1)", noun="operation")
    n_random: int = option(19, "matched random axes per condition (orthogonal to u, from the values' covariance, "
                                   "each edit scaled to displace what the attention reads as much as the true "
                                   "one): the control distribution (19 gives a smallest empirical p of 0.05)", min=1)
    cut_lambda: float = option(1.0, "cut strength (1 removes the axis, 0 leaves the values as they are)",
                               cli="--lambda")
    positions: Literal["all", "final"] = option("all", "edit the values at every position or at the final token only")
    edit_layers: tuple[int, ...] | None = option(None, "comma-separated layers to intervene on, each alone and all "
                                                       "together (default: paper III's layers as fractions of depth); "
                                                       "--layers is what is extracted")
    definitions: Definitions = definitions_option()

    def null_specs(self, loaded=None, n_params: float | None = None, run_seed: int = 0) -> list:
        """--null: `auto` is init:N with N from ablation_null_count (a copy costs a whole suite)."""
        from geomprobe.nulls import null_specs

        return null_specs(self.null, loaded, n_params=n_params if n_params is not None or loaded is not None else 0,
                          run_seed=run_seed, auto_count=ablation_null_count)


def unsupported(loaded, run_config) -> str | None:
    why = sula_unsupported(loaded, run_config, "ablation")
    if why is None and run_config.backend != "hf":
        why = "the ablation suite edits values through geomprobe's own hooks: use --backend hf"
    return why


# Paper III (Pythia-410M), printed next to the measurements (reference only, never a result).
REFERENCE_PAPER_III = {
    "axis_entropy_r_baseline": [0.27, 0.32],
    "single_layer_true_cut": "axis-entropy correlation falls to about 0",
    "single_layer_random_cut_change": 0.01,
    "multi_layer_true_cut": {"axis_entropy_r": [0.27, 0.07], "sula_mae_and_correlation_change": "under 1%"},
    "reading": "a privileged readout, not a bottleneck",
    "note": "where the paper's r was read at the edited layer, a true cut gives 0 there by construction (METHODS.md "
            "section 8.5); the r measured here is downstream of the edit",
}

PRIMARY_ACROSS_NOTE = ("each condition's primary test stands on its own; primary.p_holm_across_conditions is its "
                       "empirical p Holm-adjusted over the run's conditions, for a reader who takes them together")
DROPPED_NOTE = "columns with zero variance over the SULA prompts (dropped from the axis fit) are never edited"


# ----------------------------------------------------------------------------------------------
# The suite


def run_ablation_suite(ctx) -> dict:
    from geomprobe.interventions import save_axes

    config, loaded, seed = ctx.options, ctx.loaded, ctx.seed
    adapter = loaded.adapter
    why = unsupported(loaded, ctx.run)
    if why:
        raise ConfigError(why)
    operations = parse_ops(config.ops, config.cut_lambda)
    sets, explicit = layer_sets(adapter, config.edit_layers)

    spec, choice, info, _, _ = sula_setup(loaded, config, seed)
    records = generate(spec, ["main"])["main"]
    prompts = [r.to_prompt() for r in records]
    H_bayes = np.array([r.H_bayes for r in records])
    work = ctx.work
    n_layers = adapter.shape.n_layers
    last = n_layers - 1
    needed = measured_layers(sets, n_layers)

    axes, source, main_extraction = _suite_axes(ctx, spec, choice, records, needed)
    sets, dropped_layers, dropped_sets = _measurable_sets(loaded, axes, needed, sets, explicit, main_extraction,
                                                          config.definitions, seed)
    axes = {layer: axes[layer] for layer in needed if layer in axes}
    save_axes(work / "axis.npz", axes, source=np.array(source))
    edited = sorted({layer for _, layers in sets for layer in layers})
    paper_code = config.definitions in ("paper-code", "paper-code-as-released")
    ctx.record_prompts(prompts, f"sula:main (seed {spec.seed})")

    extract_layers = sorted(axes)
    extraction_config = ExtractionConfig(layers=extract_layers, readouts=("values",),
                                         tokens=[choice.token_strings[w] for w in spec.labels], backend="hf",
                                         max_tokens=ctx.run.max_tokens, batch_size=ctx.run.batch_size)
    ctx.used["readouts"] = list(extraction_config.readouts)
    edit_base, controls = _edit_setup(loaded, prompts, extraction_config, axes, edited, main_extraction, config, seed,
                                      work)
    common = _common_key(prompts, extraction_config, axes, edit_base, controls, ctx, config.definitions)
    ran = run_passes(loaded, prompts, extraction_config, axes, edit_base, controls, operations, sets, config, ctx.run,
                     seed, work / "conditions", common, ctx.progress, loaded.spec, ctx.batch_planner)
    untrained = null_ablations(ctx, spec, choice, records, operations, sets, needed)

    refusals = {f"{name}/{set_name}": refused_for(controls, op, layers)
                for name, op, _ in operations for set_name, layers in sets}
    results = summarise(ran.passes, operations, sets, H_bayes, config.n_boot, seed, last, config.n_random,
                        config.positions, untrained=untrained,
                        controls="unmatched, as released," if paper_code else "matched", refusals=refusals)
    results = {
        "settings": _suite_settings(loaded, config, spec, choice, info, operations, sets, axes, explicit, edited,
                                    dropped_layers, dropped_sets, ran, seed),
        "axis": _axis_entry(source, axes, controls, edit_base),
        **results,
        "untrained_null": untrained,
        "thresholds": READING_THRESHOLDS,
        "reference_paper_iii": REFERENCE_PAPER_III,
    }
    return ctx.write_results(results)


def _suite_axes(ctx, spec, choice, records, needed: list[int]) -> tuple[dict[int, InterventionAxis], str, Path]:
    """(axes, where they come from, the SULA main extraction): the sula suite's when reusable, else fitted here."""
    axes = reusable_sula_axes(ctx.run_dir.path, spec, needed)
    source = "sula/axis.npz (the sula suite's, same settings)"
    main_extraction = ctx.run_dir.path / "sula" / "extraction-main"
    if axes is None:
        axes = fit_axes(ctx, spec, choice, records, needed, ctx.work / "sula-main")
        source = "ablation/sula-main/axis.npz (the SULA main condition, fitted here)"
        main_extraction = ctx.work / "sula-main" / "extraction-main"
    return axes, source, main_extraction


def _measurable_sets(loaded, axes, needed: list[int], sets, explicit: bool, main_extraction, definitions: str,
                     seed: int) -> tuple[list[tuple[str, list[int]]], dict, dict]:
    """(the layer sets left, dropped_layers, dropped_sets): without the layers that have no axis or no
    matched control, and the sets with no later layer that has an axis (an explicit --edit-layers refuses)."""
    n_layers = loaded.adapter.shape.n_layers
    last = n_layers - 1
    missing = [layer for layer in needed if layer not in axes]
    edited_missing = sorted({layer for _, layers in sets for layer in layers} & set(missing))
    if edited_missing and explicit:
        raise ConfigError(f"layer(s) {', '.join(map(str, edited_missing))} have no entropy axis (no value column "
                          "varies across the SULA prompts at the final token): choose other --edit-layers")
    dropped_layers = {str(layer): "no value column varies across the SULA prompts at the final token"
                      for layer in missing}
    no_control = [] if definitions != "geomprobe" else _without_control(
        axes, sorted({layer for _, layers in sets for layer in layers} - set(missing)), main_extraction, seed)
    if no_control and explicit:
        raise ConfigError(f"layer(s) {', '.join(map(str, no_control))}: the final-token values vary along the entropy "
                          "axis only, so no matched random axis exists to compare the edit with: choose other --edit-layers")
    dropped_layers.update({str(layer): "the values vary along the entropy axis only: no matched random control "
                                       "(the axis is still measured downstream)" for layer in no_control})
    sets = without_layers(sets, set(missing) | set(no_control))
    dropped_sets, kept_sets = {}, []
    for set_name, layers in sets:
        if downstream_of(layers, axes, n_layers):
            kept_sets.append((set_name, layers))
            continue
        if explicit:
            raise ConfigError(f"no layer after layer {max(layers)} has an entropy axis to measure the edit on: choose "
                              "earlier --edit-layers")
        dropped_sets[set_name] = f"no layer after layer {max(layers)} has an entropy axis"
    if not kept_sets:
        without = ", ".join(map(str, [layer for layer in missing if layer < last])) or "none"
        raise ConfigError(f"no layer below the last has an entropy axis with a later layer to measure the edit on "
                          f"(layers without an axis: {without}; their final-token values do not vary across the SULA "
                          f"prompts): the ablation suite cannot run on {loaded.spec}")
    return kept_sets, dropped_layers, dropped_sets


def _suite_settings(loaded, config, spec, choice, info, operations, sets, axes, explicit: bool, edited: list[int],
                    dropped_layers: dict, dropped_sets: dict, ran: PassRun, seed: int) -> dict:
    """results.json's "settings": the prompts, operations, layer sets, tests and passes of the run."""
    n_layers = loaded.adapter.shape.n_layers
    paper_code = config.definitions in ("paper-code", "paper-code-as-released")
    released = config.definitions == "paper-code-as-released"
    return {**spec.describe(), "label_choice": choice.to_dict(), "windtunnel": info is not None,
            "ops": [name for name, _, _ in operations], "cut_lambda": config.cut_lambda,
            "positions": config.positions, "n_random": config.n_random, "seed": seed,
            "smallest_p": 1 / (1 + config.n_random) if config.n_random else None,
            "n_boot": config.n_boot,
            "layer_sets": [{"name": n, "layers": ls, "downstream": downstream_of(ls, axes, n_layers)}
                           for n, ls in sets],
            "layer_choice": "explicit --edit-layers" if explicit else
            f"paper III's Pythia-410M layers as fractions of depth (single {list(PAPER_SINGLE)}, multi "
            f"{list(PAPER_MULTI)} of {PAPER_DEPTH}), rounded half up and capped at n_layers - 2 so that a "
            f"layer follows every set; multi 0 to n_layers - 2 where the fractions give one layer",
            "axis_entropy_statistic": f"{AXIS_STATISTIC}: rho(v'.u, H_model) on each layer's own axis, the "
                                      "statistic the axes are oriented by; the output's correlation "
                                      "Pearson(H_model, H_bayes) is the SULA calibration",
            "evidence": "the axis-entropy correlation at the layers after the last edited one, and the "
                        "output; at an edited layer a cut makes it 0 by construction (kept apart, labelled)",
            "primary": PRIMARY, "secondary": SECONDARY_NOTE,
            "primary_across_conditions": PRIMARY_ACROSS_NOTE,
            "null": config.null,
            "dropped_layers": dropped_layers, "dropped_sets": dropped_sets,
            "n_forward_passes": ran.n_passes, "reused_passes": int(ran.reused),
            "n_control_passes": 1,
            **ran.settings,
            "random_axes": RELEASED_EDITS if released else PAPER_CODE_EDITS if paper_code else CONTROL_NOTE,
            "dropped_columns": DROPPED_NOTE, "definitions": config.definitions,
            **({"edit_convention": RELEASED_EDITS if released else PAPER_CODE_EDITS,
                "released_lambda_scale": 1 - config.cut_lambda, "edit_axis_file": "edit_axis.npz"}
               if paper_code else {}),
            **({"released_values": _released_what(loaded, edited)} if released else {})}


def _axis_entry(source: str, axes: dict[int, InterventionAxis], controls: dict[int, dict],
                edit_base: dict[int, InterventionAxis]) -> dict:
    """results.json's "axis": where the axes come from, their orientation, sizes and controls."""
    return {"source": source, "file": "axis.npz", "random_axes_file": "random_axes.npz",
            "orientation": "Spearman rho(z . u, H_model) >= 0 over the SULA main prompts (the axis-entropy "
                           "correlation is Spearman too)",
            "per_layer": {str(layer): {"sigma_u": axes[layer].sigma_u, "n_columns": int(axes[layer].kept.size),
                                       "n_dropped_columns": int((~axes[layer].kept).sum())}
                          for layer in axes},
            "controls": controls_summary(controls, edit_base)}


def check_options(loaded, run_config, options) -> None:
    """The layer choice and the label pair, before anything is written. --layers (what is extracted)
    without --edit-layers is refused: it once chose the edited layers, and would now leave them to
    the default in silence."""
    parse_ops(options.ops, options.cut_lambda)
    if run_config.layers is not None and options.edit_layers is None:
        raise ConfigError("ablation suite: --layers chooses the layers extracted; the layers the ablation edits are "
                          "--edit-layers (e.g. --edit-layers " + ",".join(map(str, run_config.layers)) + "); give "
                          "both when a run needs both")
    layer_sets(loaded.adapter, options.edit_layers)
    sula_setup(loaded, options, run_config.seed)


register_suite("ablation", AblationConfig, run_ablation_suite,
               "entropy-axis interventions (cut, only, shift) against random axes, on the SULA prompts",
               unsupported=unsupported, check=check_options,
               schema=AblationResults, schema_version=SCHEMA_VERSION, summary=print_summary)
