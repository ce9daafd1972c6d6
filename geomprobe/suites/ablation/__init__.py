"""The `ablation` suite: entropy-axis interventions against random axes (METHODS.md section 8).

1. Prompts: the SULA main condition (geomprobe.suites.sula.sula_setup, the sula settings of the
   RunConfig; --n-per-k defaults to 100 here, 250 in the sula suite).
2. Axis per layer: PC1 of the standardised final-token values over those prompts, oriented so that
   the Spearman rho(z . u, H_model) >= 0 (sula_metrics.fit_axis), with its means, scales and
   sigma_u. Taken from <run>/sula/axis.npz when a finished sula suite there used the same settings
   and read values; otherwise the SULA main condition is extracted by the sula suite's own code into
   <run>/ablation/sula-main/. The axes used (the edited layers' and every later layer's) are saved
   to <run>/ablation/axis.npz (geomprobe.interventions.load_axes replays them), the random control
   axes to <run>/ablation/random_axes.npz.
3. Layer sets: each --layers entry alone plus all of them together. By default paper III's
   Pythia-410M layers (single 12 and 23, multi 8, 12, 16, 20, 23 of 24) as fractions of depth,
   rounded half up and capped at n_layers - 2, so that at least one layer follows every set: 24
   layers give single 12 and 22, multi 8, 12, 16, 20, 22; 4 layers single 2, multi 1, 2; 3 layers
   (windtunnel-sula) single 1 and, since the fractions collapse there to one layer, multi 0, 1
   (layers 0 to n_layers - 2 whenever the fractions give fewer than two). A layer without an axis
   leaves its sets (on windtunnel-sula layer 0, whose final-token values do not vary, so only L1
   remains, measured at layer 2), and a default set with no later layer that has an axis is
   dropped (settings.dropped_sets). A model with one layer has nothing downstream and is refused,
   and so is an explicit --layers that includes the last layer (its own set, and the multi set,
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
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np

from geomprobe import copycache
from geomprobe.analysis.ablation_metrics import (
    AT_EDITED_LAYER,
    AXIS_STATISTIC,
    PRIMARY,
    READING_THRESHOLDS,
    SECONDARY_NOTE,
    axis_entropy_correlation,
    behaviour_change,
    behaviour_point,
    calibrated_thresholds,
    compare_with_random,
    holm,
    paired_true_vs_random,
    primary_statistic,
    reading,
)
from geomprobe.analysis.sula_metrics import correlation, mean_ci, restrict_to_labels
from geomprobe.console import table_console
from geomprobe.errors import ConfigError
from geomprobe.extraction import ExtractionConfig, extract
from geomprobe.prompts import prompts_hash
from geomprobe.rundir import atomic_save_npz, atomic_write_text
from geomprobe.sula import generate

from ..base import NullOptions, option, register_suite
from ..sula import SulaPromptOptions, sula_setup
from ..sula import unsupported as sula_unsupported
from .results import SCHEMA_VERSION, AblationResults

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
    """Entropy-axis interventions on the SULA main prompts (METHODS.md section 8). --layers (RunConfig)
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
    definitions: Literal["geomprobe", "paper-code", "paper-code-as-released"] = option(
        "geomprobe", "geomprobe | paper-code: edit as the papers' released code does (raw, uncentred values along "
                     "the raw-PCA axis; random axes not orthogonal to it, with its sigma; not matched); measured as "
                     "always | paper-code-as-released: the same on the released code's GPT-NeoX value split (the "
                     "fused query_key_value columns it calls values: queries and keys of some heads among them)")

    def null_specs(self, loaded=None, n_params: float | None = None, run_seed: int = 0) -> list:
        """--null: `auto` is init:N with N from ablation_null_count (a copy costs a whole suite)."""
        return ablation_nulls(self.null, loaded, n_params=n_params if n_params is not None or loaded is not None
                              else 0, run_seed=run_seed)


def unsupported(loaded, run_config) -> str | None:
    why = sula_unsupported(loaded, run_config, "ablation")
    if why is None and run_config.backend != "hf":
        why = "the ablation suite edits values through geomprobe's own hooks: use --backend hf"
    return why

# Paper III's layer choice on Pythia-410M (24 layers), used as fractions of depth.
PAPER_DEPTH = 24
PAPER_SINGLE = (12, 23)
PAPER_MULTI = (8, 12, 16, 20, 23)

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

# Measured with analyses/ablation_ranks.py (48 untrained tiny Llamas, 19 matched random axes each):
# the ranks of cut and shift spread as uniform ranks do (KS p 0.37-0.84), those of `only` do not
# (rank 1 or 20 in 19 of 48 at the single layer, KS p 0.001; METHODS.md 8.3). Keeping the values' largest-variance
# direction alone has no matched counterpart (a control scaled to keep as much gave the opposite
# bias: rank 18 of 20 on average), so its within-model rank carries no p-value.
ONLY_UNCALIBRATED = ("no p-value: keeping the values' largest-variance direction alone has no matched random "
                     "counterpart (on untrained models this rank is 1 or 20 far more often than a uniform rank); "
                     "the untrained copies' comparison of log2 true/random is the test")
CONTROL_VERSION = "matched-read-displacement-1"  # in every pass fingerprint: passes of other controls are rerun
CONTROL_NOTE = ("matched random axes: unit directions drawn from the values' own covariance over the SULA main "
                "prompts (PC1 removed: orthogonal to u), seeded by (seed, layer, draw), with the same operation, each "
                "edit's displacement times a gain so that the displacement the edited layer's attention hands its "
                "output projection at the final token (sum over heads of ||sum_t a_t s (z'_t - z_t)||^2, mean over "
                "the main prompts, measured in one unedited pass) equals the true edit's; per axis sigma_r (std of "
                "z.r), the measured displacements and the gains in axis.controls and random_axes.npz. Without the "
                "gain cutting PC1 wins in any network, trained or not (METHODS.md section 8.3)")
PRIMARY_ACROSS_NOTE = ("each condition's primary test stands on its own; primary.p_holm_across_conditions is its "
                       "empirical p Holm-adjusted over the run's conditions, for a reader who takes them together")
# (largest parameter count, untrained copies `--null auto` runs). A copy costs a whole suite here
# (its own axis fit, matched controls and every condition: 81 passes on windtunnel-sula, 241 on
# Pythia-410M), so auto runs 3 at every size, where the other suites run 5-19: the t rule then
# detects 2.87 copy sd half the time (2 sd: 32%), printed beside every result; --null init:7 gets
# 1.99 sd at 8x the suite's time.
ABLATION_NULL_COUNTS = ((float("inf"), 3),)
STACK_CPU_NOTE = ("it keeps the numbers bit for bit those of full passes: stacking 4 measured 0.84x the time per "
                  "condition on a Pythia-410M-shaped model (benchmarks/stacked_conditions.py) with float32 "
                  "results up to 3e-6 from one-by-one runs; GEOMPROBE_STACK_CONDITIONS=N stacks N")
DROPPED_NOTE = "columns with zero variance over the SULA prompts (dropped from the axis fit) are never edited"


# ----------------------------------------------------------------------------------------------
# Options


def parse_ops(ops, cut_lambda: float) -> list[tuple[str, str, dict]]:
    """"cut,only,shift" -> [(name, op, parameters)]: shift runs at +1 and -1 sigma_u."""
    names = [o.strip() for o in ops.split(",")] if isinstance(ops, str) else list(ops)
    names = [o for o in names if o]
    unknown = [o for o in names if o not in ("cut", "only", "shift")]
    if unknown or not names:
        raise ConfigError(f"--ops: unknown operation(s) {', '.join(unknown) or '(none given)'}; choose a "
                          "comma-separated list of cut, only, shift")
    if not math.isfinite(cut_lambda):
        raise ConfigError(f"--lambda must be a finite number, got {cut_lambda}")
    out = []
    for name in ("cut", "only", "shift"):
        if name in names:
            if name == "cut":
                out.append(("cut", "cut", {"cut_lambda": float(cut_lambda)}))
            elif name == "only":
                out.append(("only", "only", {}))
            else:
                out += [("shift+1", "shift", {"shift_c": 1.0}), ("shift-1", "shift", {"shift_c": -1.0})]
    return out


def default_layer_sets(n_layers: int) -> list[tuple[str, list[int]]]:
    """Paper III's layers (of 24) as fractions of depth: l / 24 * n_layers, rounded half up, capped
    at n_layers - 2 so that a layer follows every set, deduplicated; when the multi-layer fractions
    collapse to fewer than two layers, the multi set is layers 0 to n_layers - 2. 24 layers give
    single 12 and 22 and multi 8, 12, 16, 20, 22; 3 layers single 1 and multi 0, 1."""
    check_depth(n_layers)
    top = n_layers - 2

    def scaled(layer):
        return min(top, int(math.floor(layer / PAPER_DEPTH * n_layers + 0.5)))

    singles = sorted({scaled(layer) for layer in PAPER_SINGLE})
    multi = sorted({scaled(layer) for layer in PAPER_MULTI})
    if len(multi) < 2:
        multi = list(range(top + 1))
    return named_layer_sets(singles, multi)


def check_depth(n_layers: int) -> None:
    """A one-line ConfigError for a model too shallow to have a layer downstream of an edit."""
    if n_layers < 2:
        raise ConfigError(f"the ablation suite measures the axis-entropy correlation downstream of the edited layer, "
                          f"and a model with {n_layers} layer has none: use a model with at least 2 layers")


def named_layer_sets(singles, multi) -> list[tuple[str, list[int]]]:
    """[("L<l>", [l]) for each single layer] and ("multi", multi) when it holds more than one."""
    sets = [(f"L{layer}", [layer]) for layer in singles]
    if len(multi) > 1:
        sets.append(("multi", list(multi)))
    return sets


def without_layers(sets, missing: set) -> list[tuple[str, list[int]]]:
    """The layer sets less the layers in `missing`; empty sets and repeats of an earlier set removed."""
    out, seen = [], set()
    for name, layers in sets:
        layers = [layer for layer in layers if layer not in missing]
        if layers and tuple(layers) not in seen:
            seen.add(tuple(layers))
            out.append((name, layers))
    return out


def layer_sets(adapter, layers) -> tuple[list[tuple[str, list[int]]], bool]:
    """(layer sets, explicit): --layers gives each layer alone plus all together."""
    n_layers = adapter.shape.n_layers
    if layers is None:
        return default_layer_sets(n_layers), False
    check_depth(n_layers)
    chosen = sorted({adapter.check_layer(layer) for layer in layers})
    if chosen[-1] == n_layers - 1:
        raise ConfigError(f"--layers includes the last layer ({n_layers - 1}), which leaves no layer downstream to "
                          f"measure the axis-entropy correlation on (at the edited layer a cut makes it 0 by "
                          f"construction): choose layers from 0 to {n_layers - 2}")
    return named_layer_sets(chosen, chosen), True


def measured_layers(sets, n_layers: int) -> list[int]:
    """The layers whose axis is needed: every edited layer and every layer after the earliest
    set's last edited layer (the downstream layers of some set)."""
    edited = {layer for _, layers in sets for layer in layers}
    first_after = min(max(layers) for _, layers in sets) + 1
    return sorted(edited | set(range(first_after, n_layers)))


def downstream_of(layers, available, n_layers: int) -> list[int]:
    """The layers after the last of `layers` that have an axis (in `available`)."""
    return [layer for layer in range(max(layers) + 1, n_layers) if layer in available]


# ----------------------------------------------------------------------------------------------
# The axis


def _same_settings(saved: dict, spec) -> bool:
    wanted = json.loads(json.dumps(spec.describe()))
    return all(saved.get(key) == value for key, value in wanted.items())


def reusable_sula_axes(run_path, spec, needed: list[int]) -> dict[int, InterventionAxis] | None:
    """The finished sula suite's axes in this run directory, if it used the same prompt settings,
    read values and tried every needed layer (those without an axis are left out); else None."""
    from geomprobe.interventions import load_axes

    sula, manifest_path = run_path / "sula", run_path / "manifest.json"
    if not ((sula / "results.json").exists() and (sula / "axis.npz").exists() and manifest_path.exists()):
        return None
    manifest = json.loads(manifest_path.read_text())
    if manifest.get("suites", {}).get("sula", {}).get("status") != "complete":
        return None
    if not _same_settings(json.loads((sula / "results.json").read_text())["settings"], spec):
        return None
    with np.load(sula / "axis.npz") as data:
        if str(data["readout"]) != "values":
            return None
        fitted_layers = {int(layer) for layer in data["layers"]}  # with or without an axis
    return load_axes(sula / "axis.npz") if set(needed) <= fitted_layers else None


def fit_axes(ctx, spec, choice, records, needed: list[int], work) -> dict[int, InterventionAxis]:
    """Run the SULA main condition through the sula suite's code (extraction in
    work/extraction-main, axes in work/axis.npz) and return the layers whose axis could be fitted."""
    from geomprobe.interventions import InterventionAxis
    from geomprobe.suites.sula import extract_condition, main_axes, main_layers, save_axis_file

    last = ctx.loaded.adapter.shape.n_layers - 1
    _, model, vectors = extract_condition(ctx, spec, choice, records, "main", main_layers(ctx.loaded.adapter, needed),
                                          work, "values")
    axes = main_axes(vectors, model["H_model"], last)
    save_axis_file(work / "axis.npz", axes, last, "values")
    return {layer: InterventionAxis.from_sula(axis) for layer, axis in axes.items() if axis is not None}


PAPER_CODE_EDITS = ("--definitions paper-code: the edits follow the released code (hf_activations.py): raw, "
                    "uncentred values v, u the unit PC1 of the raw (centred) main-prompt values at each edited layer "
                    "oriented so that rho(v.u, H_model) >= 0, sigma = std of v.u; cut v - lambda (v.u) u (the "
                    "released lambda_scale is 1 - lambda), only (v.u) u, shift v +- sigma u; random axes Gaussian "
                    "unit vectors not orthogonalised against u, seeded by (seed, layer), with the true axis's sigma. "
                    "What is measured (the axis-entropy correlation on geomprobe's standardised axes, the output) "
                    "is geomprobe's")


RELEASED_EDITS = ("--definitions paper-code-as-released: as paper-code, on the released code's value split "
                  "(hf_activations.py): on GPT-NeoX the columns [2 H d, 3 H d) of the fused query_key_value output "
                  "read as (3, H, d), which the released interventions write back into (for Pythia-410M head 10's "
                  "v, then q, k and v of heads 11-15), so an edit there also moves queries and keys; on Llama-like "
                  "models the v_proj output, the model's own values (the same edit as paper-code). The axis is "
                  "the raw-PCA PC1 of those columns at the final token over the SULA main prompts; the random "
                  "axes are the released ones (gain 1, not matched; no attention read)")


def released_split(loaded) -> bool:
    """Whether --definitions paper-code-as-released edits other columns than the model's values:
    GPT-NeoX's fused query_key_value output, read as (3, H, d) (geomprobe.paper_code.neox_split)."""
    return loaded.adapter.family == "gpt_neox"


def released_edit(loaded, edit_axes: dict[int, InterventionAxis], op: str, positions: str, final_index, params):
    """The context manager that applies `op` along edit_axes to the released code's "values": columns
    [2 H d, 3 H d) of each edited layer's fused query_key_value output (every position, or the final
    token), before anything reads it."""
    import torch

    from geomprobe import interventions
    from geomprobe.hooks import Hook, hooked

    apply_op = interventions.apply_op
    shape = loaded.adapter.shape
    width = shape.n_heads * shape.d_head

    def hook(axis):
        def on_output(module, args, output):
            part = output[..., 2 * width:3 * width]
            edited = output.clone()
            if positions == "all":
                edited[..., 2 * width:3 * width] = apply_op(part, axis, op, **params)
            else:
                rows = torch.arange(output.shape[0], device=output.device)
                index = final_index.to(output.device)
                edited[rows, index, 2 * width:3 * width] = apply_op(part[rows, index], axis, op, **params)
            return edited

        return on_output

    return hooked([Hook(loaded.adapter.value_module(layer), hook(axis), prepend=True)
                   for layer, axis in sorted(edit_axes.items())])


def _released_what(loaded, layers) -> str:
    """What the released code calls the values of this model (geomprobe.paper_code)."""
    from geomprobe.paper_code import neox_released_blocks

    shape = loaded.adapter.shape
    if released_split(loaded):
        blocks = ", ".join(f"{kind}{head}" for head, kind in neox_released_blocks(shape.n_heads))
        return (f"layers {', '.join(map(str, layers))}: query_key_value columns {2 * shape.n_heads * shape.d_head}-"
                f"{3 * shape.n_heads * shape.d_head - 1} read as (3, H, d): {blocks}")
    return "the v_proj output (the model's own values: the released reshape only regroups them)"


def paper_code_axes(values: dict[int, np.ndarray], H_model) -> dict[int, InterventionAxis]:
    """The released code's edit axes, as InterventionAxis objects that geomprobe's apply_op turns into
    its raw-value edits (mean 0, scale 1, every column kept): values {layer: [n_prompts, p] raw
    final-token values of the SULA main prompts}."""
    from scipy.stats import spearmanr

    from geomprobe.interventions import InterventionAxis

    out = {}
    for layer, matrix in values.items():
        matrix = np.asarray(matrix, dtype=np.float64)
        centred = matrix - matrix.mean(axis=0)
        u = np.linalg.svd(centred, full_matrices=False)[2][0]
        coords = matrix @ u
        rho = spearmanr(coords, H_model)[0] if np.std(coords) > 0 else 0.0
        if np.isfinite(rho) and rho < 0:
            u, coords = -u, -coords
        out[layer] = InterventionAxis(mean=np.zeros(u.size), scale=np.ones(u.size), kept=np.ones(u.size, bool), u=u,
                                      sigma_u=float(np.std(coords)))
    return out


def paper_code_randoms(edit_axes: dict[int, InterventionAxis], n: int, seed: int) -> dict[int, np.ndarray]:
    from geomprobe.paper_code import paper_random_axes

    return {layer: paper_random_axes(axis.u, n, np.random.default_rng([seed, layer])) for layer, axis in edit_axes.items()}


def _without_control(axes: dict[int, InterventionAxis], layers, main_extraction, seed: int) -> list[int]:
    """The layers among `layers` whose main-prompt values vary along their entropy axis only (e.g.
    layer 0 when every SULA prompt ends in the same token): no matched control direction exists."""
    from geomprobe.errors import AnalysisError
    from geomprobe.interventions import matched_directions

    values = _main_values(main_extraction, layers)
    out = []
    for layer in layers:
        try:
            matched_directions(axes[layer], values[layer], 1, seed, layer)
        except AnalysisError:
            out.append(layer)
    return out


def _main_values(path, layers) -> dict[int, np.ndarray]:
    """{layer: [n, p]} raw final-token values of the SULA main prompts from the axis fit's extraction."""
    from geomprobe.extraction import load_extraction

    extraction = load_extraction(path)
    values = extraction["values"]
    return {layer: np.asarray(values[:, extraction.layers.index(layer)], dtype=np.float64).reshape(len(values), -1)
            for layer in layers}


def _axes_digest(axes: dict[int, InterventionAxis]) -> str:
    digest = hashlib.sha256()
    for layer in sorted(axes):
        axis = axes[layer]
        for array in (axis.mean, axis.scale, axis.kept, axis.u, np.array([axis.sigma_u])):
            digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest()[:16]


# ----------------------------------------------------------------------------------------------
# Passes


def _one_pass(loaded, prompts, extraction_config, true_axes, edit, shared=None, released: bool = False) -> dict:
    """One forward pass over the prompts; edit = (op, parameters, {layer: axis}, positions) or None.
    Returns the labels' next-token probabilities and the axis-entropy correlation at every extracted
    layer (values projected on the true axis, re-extracted after the edit). shared: a
    geomprobe.prefix.SharedPrefix below the first edited layer (or below), so that only the blocks
    from there on run; None runs the full pass through extract. released: edit the released code's
    GPT-NeoX value split (released_edit) instead of the values."""
    from geomprobe.hooks import edit_values
    from geomprobe.interventions import make_editor

    batch_context = None
    if edit is not None:
        op, params, edit_axes, positions = edit

        def batch_context(final_index):
            if released:
                return released_edit(loaded, edit_axes, op, positions, final_index, params)
            return edit_values(loaded.adapter, sorted(edit_axes),
                               make_editor(edit_axes, op, positions, final_index, **params))

    if shared is not None:
        if edit is not None and min(edit[2]) < shared.start:
            raise ValueError(f"an edit at layer {min(edit[2])} cannot run from the prefix below layer {shared.start}")
        extraction = shared.extract(batch_context)
    else:
        extraction = extract(loaded, prompts, extraction_config, progress=False, batch_context=batch_context)
    return _pass_numbers(extraction, true_axes)


def _stacked_passes(true_axes, edits, shared, verify: bool = True) -> list[dict]:
    """_one_pass(..., edit, shared) for each of `edits`, run together (SharedPrefix.extract_stacked:
    len(edits) conditions in one call per batch). The edits differ in their axes only: the same op,
    parameters, layers and positions. verify: check the first batch against the unstacked runs
    (raises geomprobe.prefix.PrefixUnavailable on a difference)."""
    from geomprobe.interventions import make_editor

    op, params, first_axes, positions = edits[0]
    layers = sorted(first_axes)
    for other in edits[1:]:
        if (other[0], other[1], sorted(other[2]), other[3]) != (op, params, layers, positions):
            raise ValueError("stacked passes must share their op, parameters, layers and positions")
    if layers[0] < shared.start:
        raise ValueError(f"an edit at layer {layers[0]} cannot run from the prefix below layer {shared.start}")

    def editor_of(edit_axes):
        return lambda final_index: make_editor(edit_axes, op, positions, final_index, **params)

    extractions = shared.extract_stacked(layers, [editor_of(edit_axes) for _, _, edit_axes, _ in edits], verify)
    return [_pass_numbers(extraction, true_axes) for extraction in extractions]


def _pass_numbers(extraction, true_axes) -> dict:
    """A pass's JSON numbers: the labels' next-token probabilities, and the axis-entropy correlation
    at every extracted layer that has an axis (the values projected on the true axis)."""
    side = restrict_to_labels(extraction["token_probs"])
    n = len(extraction["token_probs"])
    geometry = {}
    for column, layer in enumerate(extraction.layers):
        if layer in true_axes:
            coords = true_axes[layer].project(extraction["values"][:, column].reshape(n, -1))
            geometry[str(layer)] = axis_entropy_correlation(coords, side["H_model"], true_axes[layer].sigma_u)
    return {"token_probs": extraction["token_probs"].astype(np.float64).tolist(), "axis_entropy": geometry}


def _prefix_order(plan):
    """The plan with the baseline first and the edited passes grouped by their first edited layer,
    lowest first (plan order within a group), so that one prefix state is held at a time and each
    group's is the previous one moved up (results do not depend on the order)."""
    return sorted(plan, key=lambda entry: -1 if entry[1] is None else min(entry[1][2]))


class _Prefixes:
    """Prefix reuse for the edited passes (geomprobe.prefix): one SharedPrefix below the first
    edited layer at a time, built when the first pass of its group is computed, and moved up to
    the next group's first edited layer from there (the groups come lowest first); where it
    cannot be built or moved (or its first-batch check against a full pass fails) the passes run
    in full, and settings say which was used and why."""

    def __init__(self, loaded, prompts, extraction_config):
        from geomprobe.prefix import why_not

        self.loaded, self.prompts, self.config = loaded, prompts, extraction_config
        self.why = why_not(loaded)
        self.start, self.shared = None, None
        self.groups: dict[int, dict] = {}
        self.n_layers = loaded.adapter.shape.n_layers

    def below(self, start: int | None, passes: int = 1):
        """The SharedPrefix for edits from `start` on (None: a full pass); called when `passes` passes
        are computed (0: only asked for, see counted)."""
        if start is None:
            return None
        group = self.groups.get(start)
        if group is None:
            from geomprobe.prefix import PrefixUnavailable, SharedPrefix

            shared, self.shared, self.start = self.shared, None, None
            group = self.groups[start] = {"first_edited_layer": start, "computed_passes": 0, "used": False,
                                          "why": self.why}
            if self.why is None:
                try:
                    if shared is not None and shared.start <= start:
                        shared.advance(start)
                        group["from"] = "the previous group's prefix, moved up"
                    else:
                        shared = SharedPrefix(self.loaded, self.prompts, self.config, start)
                    self.shared, self.start = shared, start
                    group.update(used=True, check=dict(shared.check))
                except PrefixUnavailable as error:
                    group["why"] = str(error)
                except Exception as error:  # noqa: BLE001 - a prefix that cannot be built runs full passes
                    group["why"] = f"{type(error).__name__}: {error}"
        group["computed_passes"] += passes
        return self.shared if group["used"] and self.start == start else None

    def counted(self, start: int, passes: int) -> None:
        """`passes` more passes computed from the prefix below `start` (after below(start, 0))."""
        self.groups[start]["computed_passes"] += passes

    def release(self):
        self.start, self.shared = None, None

    def settings(self) -> dict:
        groups = list(self.groups.values())
        used = [g for g in groups if g["used"]]
        computed = sum(g["computed_passes"] for g in groups)
        if not groups:
            note = "no edited pass was computed in this run (every one was read back)"
        elif len(used) == len(groups):
            note = ("every edited pass computed here ran blocks from its first edited layer on, from the unedited "
                    "blocks below it run once per batch (checked against a full pass on the first batch)")
        elif not used:
            note = f"full passes: {groups[0]['why']}"
        else:
            note = "; ".join(f"first edited layer {g['first_edited_layer']}: "
                             + ("prefix reuse" if g["used"] else f"full passes ({g['why']})") for g in groups)
        cost = sum(g["computed_passes"] * ((self.n_layers - g["first_edited_layer"]) if g["used"] else self.n_layers)
                   for g in groups)
        return {"prefix_reuse": bool(used), "prefix_reuse_note": note,
                "prefix_reuse_groups": groups,
                "edited_block_runs_fraction": cost / (computed * self.n_layers) if computed else None}


def stacked_conditions(loaded, run_config, options, n_prompts: int, group_size: int,
                       prefix_why: str | None, batch_planner=None) -> tuple[int, str]:
    """(m, why in one line): how many conditions of a stack group (one op and layer set: its true
    and random axes, which share their prefix state) one call runs. 1 without prefix reuse
    (prefix_why: why there is none); else GEOMPROBE_STACK_CONDITIONS=N when set; on a CPU 1
    (STACK_CPU_NOTE), and on MPS; on CUDA the planner's recommended batch (geomprobe.plan.recommend_batch_size,
    in the memory free now plus what this process's torch holds, the weights among it) over the
    rows a call holds unstacked, min(batch size, prompts). Never more than group_size."""
    from geomprobe.prefix import STACK_ENV, stack_env

    if prefix_why is not None:
        return 1, f"one condition a call: stacking runs from a prefix state, and there is none ({prefix_why})"
    given = stack_env()
    if given is not None:
        m = min(given, group_size)
        return m, f"{STACK_ENV}={given}" + (f", capped at the {group_size} conditions of a group" if given > m else "")
    device = loaded.model.get_input_embeddings().weight.device
    if device.type == "cpu":
        return 1, f"one condition a call on the CPU: {STACK_CPU_NOTE}"
    if device.type != "cuda":
        return 1, f"one condition a call on {device.type}: stacking is planned on CUDA only"
    if batch_planner is None:
        return 1, "one condition a call: no memory planner was handed to the suite (SuiteContext.batch_planner)"
    rows = max(1, min(run_config.batch_size or 8, n_prompts))
    try:
        import torch

        free, _ = torch.cuda.mem_get_info(device)
        memory = free + torch.cuda.memory_reserved(device)
        recommended = batch_planner(suites=options, run_config=replace(run_config, device=str(device)),
                                    device=str(device), device_memory=memory,
                                    device_name=torch.cuda.get_device_name(device), tokenizer=loaded.tokenizer)
    except Exception as error:  # noqa: BLE001 - no plan, no stacking
        return 1, f"one condition a call: the memory plan failed ({type(error).__name__}: {error})"
    m = max(1, min(recommended // rows, group_size))
    return m, (f"CUDA: the planner's recommended batch of {recommended} rows (geomprobe.plan.recommend_batch_size, "
               f"{memory / 2**30:.1f} GiB free or held by this process) over {rows} rows a call"
               + (f", capped at the {group_size} conditions of a group" if recommended // rows > group_size else ""))


class _Stacking:
    """Stacked conditions (geomprobe.prefix.SharedPrefix.extract_stacked): the passes of a stack
    group still to compute run `size` at a time from the group's prefix state. Each group's first
    call is checked on the first batch against the same conditions run one by one; a failed check
    or any error turns stacking off for the rest of the run (why_off says why), and those passes
    run one at a time. settings() records what ran."""

    def __init__(self, size: int, note: str):
        self.size, self.note = size, note
        self.why_off: str | None = None
        self.groups: list[dict] = []

    def run(self, group_name: str, todo: list, prefixes: _Prefixes, true_axes, write) -> list:
        """Compute what it can of `todo` ([(file name, edit, first edited layer, key)], one group's
        passes not read back) stacked, handing each pass to write(file name, key, numbers); returns
        the entries left for one-by-one passes."""
        if self.size < 2 or len(todo) < 2 or self.why_off is not None:
            return todo
        start = todo[0][2]
        record = {"group": group_name, "first_edited_layer": start, "stacked_passes": 0, "calls": 0}
        self.groups.append(record)
        shared = prefixes.below(start, passes=0)
        if shared is None:
            record["why_not"] = "no prefix state below its first edited layer (prefix_reuse_groups says why)"
            return todo
        while todo:
            chunk = todo[:self.size]
            if len(chunk) < 2:
                break
            try:
                results = _stacked_passes(true_axes, [edit for _, edit, _, _ in chunk], shared,
                                          verify=record["calls"] == 0)
            except Exception as error:  # noqa: BLE001 - stacking that fails or differs runs the passes one by one
                from geomprobe.prefix import PrefixUnavailable

                why = str(error) if isinstance(error, PrefixUnavailable) else f"{type(error).__name__}: {error}"
                self.why_off = record["fell_back"] = why
                if shared.stack_check:
                    record["check"] = dict(shared.stack_check)
                break
            if record["calls"] == 0:
                record["check"] = dict(shared.stack_check)
            for (file_name, _, _, key), numbers in zip(chunk, results):
                write(file_name, key, numbers)
            prefixes.counted(start, len(chunk))
            record["calls"] += 1
            record["stacked_passes"] += len(chunk)
            todo = todo[len(chunk):]
        return todo

    def settings(self) -> dict:
        note = self.note
        if self.why_off is not None:
            fell = next(g for g in self.groups if "fell_back" in g)
            note += (f"; from {fell['group']} on, one condition a call (stacking fell back: {self.why_off})")
        return {"stacked_conditions": self.size, "stacked_conditions_note": note, "stacked_groups": self.groups}


def _read_pass(path, key: dict) -> dict | None:
    """The pass cached at path if its fingerprint is `key` (as it reads back from JSON), else None."""
    if path.exists():
        cached = json.loads(path.read_text())
        if cached.get("fingerprint") == json.loads(json.dumps(key)):
            return cached
    return None


def _write_pass(path, key: dict, numbers: dict) -> dict:
    result = {"fingerprint": json.loads(json.dumps(key)), **numbers}
    atomic_write_text(path, json.dumps(result) + "\n")
    return result


def _cached_pass(path, key: dict, compute) -> tuple[dict, bool]:
    """(the pass, whether it was read from path): a pass whose fingerprint matches is not rerun."""
    cached = _read_pass(path, key)
    if cached is not None:
        return cached, True
    return _write_pass(path, key, compute()), False


def _stack_groups(ordered):
    """The plan entries (in _prefix_order) in runs of one op, parameters and layer set: the passes
    that differ in their axis only (the baseline alone)."""
    def same(entry):
        what = entry[1]
        return entry[0] if what is None else (what[0], json.dumps(what[1], sort_keys=True), tuple(what[2]))

    return [list(group) for _, group in itertools.groupby(ordered, key=same)]


def ablation_null_count(n_params: float | None) -> int:
    """The untrained copies `--null auto` stands for in the ablation suite (ABLATION_NULL_COUNTS)."""
    if n_params is None:
        return ABLATION_NULL_COUNTS[0][1]
    return next(count for limit, count in ABLATION_NULL_COUNTS if n_params <= limit)


def resolve_null(text: str, n_params: float | None) -> str:
    """--null with `auto` (or init:auto) replaced by init:N, N = ablation_null_count(n_params)."""
    parts = [part.strip() for part in (text or "").split(",") if part.strip()]
    count = ablation_null_count(n_params)
    return ",".join(f"init:{count}" if part in ("auto", "init:auto") else
                    f"{part.split(':')[0]}:{count}" if part in ("init-once:auto", "init-legacy:auto") else part
                    for part in parts)


def ablation_nulls(text: str, loaded=None, n_params: float | None = None, run_seed: int = 0):
    """--null for the ablation suite -> [NullSpec]: `auto` is init:N with N from ablation_null_count
    (the parameters of `loaded`, or n_params); everything else as geomprobe.nulls.null_specs (the
    copies' seeds from run_seed)."""
    from geomprobe.nulls import null_specs

    if n_params is None and loaded is not None:
        n_params = sum(p.numel() for p in loaded.model.parameters())
    return null_specs(resolve_null(text, n_params), loaded, run_seed=run_seed)


# ----------------------------------------------------------------------------------------------
# The controls


def control_axes(loaded, prompts, extraction_config, edit_base: dict[int, InterventionAxis],
                 main_values: dict[int, np.ndarray], n_random: int, seed: int, positions: str,
                 paper_code: bool, released: bool = False) -> dict[int, dict]:
    """{layer: {"directions" [n, p], "sigma_r" [n], "energies" {op: [1 + n]} or None, "gains" {op: [n]}}}
    for each edited layer: the random control axes (METHODS.md section 8.3), drawn from the
    values' own covariance (PC1 removed), each op's gain matching the displacement the attention
    reads (interventions.read_displacements, one unedited pass). paper-code: the released code's
    random axes, with gain 1 (not matched, as released); their energies are still measured, except
    on the released split (released: not the values the attention mixes)."""
    from geomprobe.interventions import OPS, direction_sigmas, matched_directions, matched_gains, read_displacements

    if paper_code:
        directions = paper_code_randoms(edit_base, n_random, seed)
    else:
        directions = {layer: matched_directions(edit_base[layer], main_values[layer], n_random, seed, layer)
                      for layer in edit_base}
    energies = ({layer: None for layer in edit_base} if released else
                read_displacements(loaded, prompts, extraction_config,
                                   {layer: (edit_base[layer], directions[layer]) for layer in edit_base}, positions))
    out = {}
    for layer in edit_base:
        gains = ({op: np.ones(n_random) for op in OPS} if paper_code
                 else matched_gains(energies[layer]))
        out[layer] = {"directions": directions[layer],
                      "sigma_r": direction_sigmas(edit_base[layer], main_values[layer], directions[layer]),
                      "energies": energies[layer], "gains": gains,
                      "refused": {op: refused_control(gains[op], layer, op) for op in OPS}}
    return out


MAX_CONTROL_GAIN = 100.0  # untrained tiny Llamas' matched gains span 0.48-4.3 (912 controls, 24 models)


def refused_control(gains, layer: int, op: str) -> str | None:
    """Why the matched controls of `op` at `layer` are refused (None: they are not). A gain above
    MAX_CONTROL_GAIN means the values barely vary along a control direction, so matching the true
    edit's displacement would multiply little more than rounding (a planted axis that carries all
    the variance gave gains near 1e7)."""
    gains = np.asarray(gains, dtype=np.float64)
    if gains.size and np.all(np.isfinite(gains)) and float(gains.max()) <= MAX_CONTROL_GAIN:
        return None
    return (f"layer {layer}: the values barely vary along the matched {op} controls' directions (gain up to "
            f"{float(np.nanmax(gains)):.3g}, limit {MAX_CONTROL_GAIN:g}): a matched edit would amplify rounding, "
            "so this condition has no random-axis control (the untrained copies still compare it)")


def refused_for(controls: dict[int, dict], op: str, layers) -> list[str]:
    """The reasons the controls of `op` are refused at any of `layers` ([]: none is)."""
    return [why for layer in layers if (why := (controls.get(layer) or {}).get("refused", {}).get(op))]


def save_controls(path, controls: dict[int, dict], seed: int, note: str) -> None:
    from geomprobe.interventions import OPS

    arrays = {}
    for layer, entry in controls.items():
        arrays[f"layer_{layer}"] = entry["directions"]
        arrays[f"sigma_r_{layer}"] = entry["sigma_r"]
        for op in OPS:
            arrays[f"gain_{op}_{layer}"] = entry["gains"][op]
            if entry["energies"] is not None:
                arrays[f"energy_{op}_{layer}"] = entry["energies"][op]
    atomic_save_npz(path, **arrays, seed=np.array(seed), control=np.array(note))


def controls_summary(controls: dict[int, dict], edit_base: dict[int, InterventionAxis]) -> dict:
    """results.json's per-layer record of the controls: sigma_u, each control's sigma_r, and per op
    the displacement the attention reads (true, each control before its gain) and the gains."""
    from geomprobe.interventions import OPS

    return {str(layer): {"sigma_u": edit_base[layer].sigma_u,
                         "sigma_r": [float(v) for v in entry["sigma_r"]],
                         "read_displacement": None if entry["energies"] is None else {
                             op: {"true": float(entry["energies"][op][0]),
                                  "random_unit_gain": [float(v) for v in entry["energies"][op][1:]]} for op in OPS},
                         "gain": {op: [float(v) for v in entry["gains"][op]] for op in OPS},
                         "refused": {op: why for op, why in (entry.get("refused") or {}).items() if why}}
            for layer, entry in controls.items()}


def _controls_digest(controls: dict[int, dict]) -> str:
    from geomprobe.interventions import OPS

    digest = hashlib.sha256()
    for layer in sorted(controls):
        digest.update(np.ascontiguousarray(controls[layer]["directions"]).tobytes())
        for op in OPS:
            digest.update(np.ascontiguousarray(controls[layer]["gains"][op]).tobytes())
    return digest.hexdigest()[:16]


# ----------------------------------------------------------------------------------------------
# Running the passes of one model (the model itself, or an untrained copy)


@dataclass
class PassRun:
    passes: dict
    reused: int
    n_passes: int
    settings: dict


def run_passes(loaded, prompts, extraction_config, axes, edit_base, controls, operations, sets, options, run_config,
               seed: int, conditions_dir, common: dict, progress: bool, label: str, batch_planner=None) -> PassRun:
    """The baseline and every condition's passes (true axis and n_random controls) for one model,
    each cached in conditions_dir/<name>.json under its fingerprint (common plus the pass's own
    key), with prefix reuse and stacking where they are proven (module docstring, item 4); with
    --definitions paper-code-as-released on GPT-NeoX the edits go to the released split, one
    condition a call."""
    from geomprobe.console import ProgressReport

    n_random, positions = options.n_random, options.positions
    plan = [("baseline", None, {})]
    for name, op, params in operations:
        for set_name, layers in sets:
            draws = [] if refused_for(controls, op, layers) else range(n_random)
            for draw in [None, *draws]:
                axis_name = "true" if draw is None else f"random{draw:02d}"
                plan.append((f"{name}_{set_name}_{axis_name}", (op, params, layers, draw),
                             {"op": op, **params, "layers": layers, "positions": positions,
                              "axis": axis_name, "seed": seed}))
    passes, reused = {}, 0
    released = options.definitions == "paper-code-as-released" and released_split(loaded)
    prefixes = _Prefixes(loaded, prompts, extraction_config)
    stacking = (_Stacking(1, "one condition a call: the as-released edits write into the fused query_key_value "
                             "columns, which stacked calls do not edit") if released else
                _Stacking(*stacked_conditions(loaded, run_config, options, len(prompts), 1 + n_random, prefixes.why,
                                              batch_planner)))

    def edit_of(what):
        if what is None:
            return None, None
        op, params, layers, draw = what
        edit_axes = {layer: edit_base[layer] if draw is None else
                     edit_base[layer].with_direction(controls[layer]["directions"][draw],
                                                     controls[layer]["gains"][op][draw])
                     for layer in layers}
        return (op, params, edit_axes, positions), min(layers)

    with ProgressReport(progress, f"{label}, {len(prompts)} prompts a pass", len(plan), verb="ablation",
                        unit="passes") as bar:
        def write(file_name, key, numbers):
            passes[file_name] = _write_pass(conditions_dir / f"{file_name}.json", key, numbers)
            bar.advance(1)

        for group in _stack_groups(_prefix_order(plan)):
            todo = []  # the group's passes not read back: (file name, edit, first edited layer, key)
            for file_name, what, key in group:
                key = {**common, **key}
                cached = _read_pass(conditions_dir / f"{file_name}.json", key)
                if cached is not None:
                    passes[file_name], reused = cached, reused + 1
                    bar.advance(1)
                else:
                    todo.append((file_name, *edit_of(what), key))
            todo = stacking.run(group[0][0].rsplit("_", 1)[0], todo, prefixes, axes, write)
            for file_name, edit, start, key in todo:
                passes[file_name], _ = _cached_pass(
                    conditions_dir / f"{file_name}.json", key,
                    lambda: _one_pass(loaded, prompts, extraction_config, axes, edit, prefixes.below(start), released))
                bar.advance(1)
    prefixes.release()
    return PassRun(passes, reused, len(plan), {**prefixes.settings(), **stacking.settings()})


def _edit_setup(loaded, prompts, extraction_config, axes, edited, main_extraction, config, seed, work):
    """(edit axes {layer: InterventionAxis}, controls) for the edited layers of one model: its own
    axes (geomprobe) or the released code's raw-PCA axes (paper-code), and its matched controls."""
    from geomprobe.interventions import save_axes

    paper_code = config.definitions in ("paper-code", "paper-code-as-released")
    released = config.definitions == "paper-code-as-released"
    if released:
        from geomprobe.paper_code import released_final_token_values

        main_values = {layer: released_final_token_values(loaded, prompts, layer, extraction_config.max_tokens,
                                                          extraction_config.batch_size)[0] for layer in edited}
    else:
        main_values = _main_values(main_extraction, edited)
    if paper_code:
        from geomprobe.extraction import load_extraction

        main = load_extraction(main_extraction)
        edit_base = paper_code_axes(main_values, restrict_to_labels(main["token_probs"])["H_model"])
        what = "the released value split" if released else "the SULA main values"
        save_axes(work / "edit_axis.npz", edit_base, source=np.array(f"raw-PCA PC1 of {what} ({config.definitions})"))
    else:
        edit_base = {layer: axes[layer] for layer in edited}
    controls = control_axes(loaded, prompts, extraction_config, edit_base, main_values, config.n_random, seed,
                            config.positions, paper_code, released and released_split(loaded))
    note = RELEASED_EDITS if released else PAPER_CODE_EDITS if paper_code else CONTROL_NOTE
    save_controls(work / "random_axes.npz", controls, seed, note)
    return edit_base, controls


def _common_key(prompts, extraction_config, axes, edit_base, controls, ctx, definitions: str) -> dict:
    common = {"prompts_sha256": prompts_hash(prompts), "layers": extraction_config.layers,
              "batch_size": ctx.run.batch_size, "axes": _axes_digest(axes), "tokens": extraction_config.tokens,
              "max_tokens": ctx.run.max_tokens, "axis_statistic": AXIS_STATISTIC,
              "controls": _controls_digest(controls), "control": CONTROL_VERSION}
    if definitions != "geomprobe":
        common.update(definitions=definitions, edit_axes=_axes_digest(edit_base))
    return common


# ----------------------------------------------------------------------------------------------
# Untrained copies (geomprobe.nulls): the same ablation, each on its own entropy axis


def null_ablation(ctx, null, copy, spec, choice, records, operations, sets, needed: list[int]) -> dict:
    """The suite's conditions on one untrained copy: the SULA main condition extracted through it,
    its own axes fitted there, its own matched controls, the same passes; per condition the
    primary statistic and the true and random axes' behaviour changes. A condition whose layers
    have no axis on this copy (or nothing downstream) is left out with why."""
    from geomprobe.interventions import InterventionAxis, save_axes
    from geomprobe.suites.sula import main_axes, main_layers

    config = ctx.options
    work = ctx.work / "nulls" / null.name
    prompts = [r.to_prompt() for r in records]
    H_bayes = np.array([r.H_bayes for r in records])
    n_layers = copy.adapter.shape.n_layers
    last = n_layers - 1
    tokens = [choice.token_strings[w] for w in spec.labels]
    fit_config = ExtractionConfig(layers=main_layers(copy.adapter, needed), readouts=("values",), tokens=tokens,
                                  backend="hf", max_tokens=ctx.run.max_tokens, batch_size=ctx.run.batch_size)
    main_dir = work / "sula-main" / "extraction-main"
    main = extract(copy, prompts, fit_config, out_dir=main_dir, progress=ctx.progress,
                   label=f"ablation: {null.label}, SULA main")
    H_model = restrict_to_labels(main["token_probs"])["H_model"]
    vectors = {layer: main["values"][:, column].reshape(len(records), -1) for column, layer in enumerate(main.layers)}
    entry = {**null.to_dict(), "conditions": {}, "not_measured": {}}
    try:
        fitted = main_axes(vectors, H_model, last)
    except ConfigError as error:
        entry["note"] = str(error)
        return entry
    axes = {layer: InterventionAxis.from_sula(a) for layer, a in fitted.items() if a is not None and layer in needed}
    usable = []
    for set_name, layers in sets:
        if any(layer not in axes for layer in layers) or not downstream_of(layers, axes, n_layers):
            entry["not_measured"][set_name] = "no entropy axis at an edited layer, or none downstream, on this copy"
        else:
            usable.append((set_name, layers))
    if not usable:
        return entry
    edited = sorted({layer for _, layers in usable for layer in layers})
    extraction_config = ExtractionConfig(layers=sorted(axes), readouts=("values",), tokens=tokens, backend="hf",
                                         max_tokens=ctx.run.max_tokens, batch_size=ctx.run.batch_size)
    save_axes(work / "axis.npz", axes, source=np.array(f"the SULA main condition through {null.name}"))
    edit_base, controls = _edit_setup(copy, prompts, extraction_config, axes, edited, main_dir, config, ctx.seed, work)
    common = _common_key(prompts, extraction_config, axes, edit_base, controls, ctx, config.definitions)
    ran = run_passes(copy, prompts, extraction_config, axes, edit_base, controls, operations, usable, config,
                     ctx.run, ctx.seed, work / "conditions", common, ctx.progress, f"ablation: {null.label}",
                     ctx.batch_planner)
    base = restrict_to_labels(np.array(ran.passes["baseline"]["token_probs"]))["H_model"]
    for name, _, _ in operations:
        for set_name, _ in usable:
            true = restrict_to_labels(np.array(ran.passes[f"{name}_{set_name}_true"]["token_probs"]))["H_model"]
            randoms = [restrict_to_labels(np.array(ran.passes[f"{name}_{set_name}_random{draw:02d}"]["token_probs"])
                                          )["H_model"] for draw in range(config.n_random)
                       if f"{name}_{set_name}_random{draw:02d}" in ran.passes]  # none where refused
            true_point = behaviour_point(H_bayes, base, true)
            random_points = [behaviour_point(H_bayes, base, H) for H in randoms]
            primary = primary_statistic(true_point["mean_abs_dH_bits"], [p["mean_abs_dH_bits"] for p in random_points])
            entry["conditions"][f"{name}/{set_name}"] = {
                "rank": primary["rank"], "of": primary["of"], "log2_ratio": primary["log2_ratio"],
                "true_mean_abs_dH_bits": true_point["mean_abs_dH_bits"],
                "random_mean_abs_dH_bits": primary["random_mean"],
                "delta_mae_bits": [true_point["delta_mae_bits"], *[p["delta_mae_bits"] for p in random_points]],
                "delta_pearson": [true_point["delta_pearson"], *[p["delta_pearson"] for p in random_points]]}
    entry["n_forward_passes"] = ran.n_passes
    entry["mae_bits"] = float(np.mean(np.abs(base - H_bayes)))
    return entry


def _copy_result_key(ctx, copy, spec, choice, records, operations, sets, needed) -> dict | None:
    """What determines null_ablation's entry for this copy (geomprobe.copycache.key_of: the copy's
    identity, tokenizer and versions), or None with the cache off or for a checkpoint null: the
    suite's options, the run's settings, the seed, the task, labels and prompts, the operations,
    layer sets and needed layers (not --null: which copies run does not change one copy's entry).
    Over-keyed on purpose: a miss costs time, a wrong hit a result."""
    run = ctx.run
    options = {k: v for k, v in ctx.options.to_dict().items() if k not in ("null", "null_stop")}
    request = {"what": "ablation null_ablation", "options": options,
               "run": {"max_tokens": run.max_tokens, "batch_size": run.batch_size, "backend": run.backend,
                       "dtype": run.dtype, "device": str(getattr(copy, "device", ""))},
               "seed": ctx.seed, "task": repr(spec), "labels": repr(sorted(choice.token_strings.items())),
               "prompts_sha256": prompts_hash([r.to_prompt() for r in records]),
               "H_bayes": [round(float(r.H_bayes), 12) for r in records],
               "operations": repr(operations), "sets": repr(sets), "needed": [int(n) for n in needed]}
    return copycache.key_of(copy, request)


def null_ablations(ctx, spec, choice, records, operations, sets, needed: list[int]) -> dict | None:
    """null_ablation on each untrained copy of --null, one copy alive at a time; None with --null off."""
    specs = ctx.null_specs()
    if not specs:
        return None
    models = []
    for null, copy in ctx.nulls(specs):
        key = _copy_result_key(ctx, copy, spec, choice, records, operations, sets, needed)
        entry = copycache.restore_result(key)
        if entry is None:
            entry = null_ablation(ctx, null, copy, spec, choice, records, operations, sets, needed)
            copycache.store_result(key, entry)
        elif ctx.progress:
            print(f"ablation: {null.label}: its conditions from the copy cache ({entry['from_copy_cache']})", flush=True)
        models.append(entry)
    return {"spec": ctx.options.null, "description": ", ".join(n.name for n in specs), "models": models,
            "note": "each untrained copy runs the same conditions on its own entropy axis (fitted on its own SULA "
                    "main extraction) with its own matched random axes"}


def untrained_for(condition_id: str, untrained: dict | None, model_ratio) -> tuple[dict | None, dict]:
    """(the primary statistic against the untrained copies, the condition's "behaviour changed"
    thresholds) for one condition: judge_against_nulls of the model's log2 ratio among the copies'
    (fail closed: "not tested" when it cannot be computed), and calibrated_thresholds from every
    copy's edits of the condition; without copies (None, the fixed fallback)."""
    from geomprobe.analysis.null_comparison import judge_against_nulls, not_tested

    fixed = {"mae_bits": READING_THRESHOLDS["mae_bits"], "pearson": READING_THRESHOLDS["pearson"],
             "source_fixed": READING_THRESHOLDS["behaviour_source"]}
    if untrained is None:
        return None, fixed
    measured = [m["conditions"][condition_id] for m in untrained["models"] if condition_id in m["conditions"]]
    changes = {"mae_bits": [v for m in measured for v in m["delta_mae_bits"]],
               "pearson": [v for m in measured for v in m["delta_pearson"]]}
    thresholds = calibrated_thresholds(changes)
    label = "log2(true / mean matched random) of the mean |dH|, each copy on its own axis"
    ratios = [m["log2_ratio"] for m in measured if m["log2_ratio"] is not None]
    if model_ratio is None:
        return not_tested(label, "the model's ratio is undefined (no |dH| from the true or the random axes)"), thresholds
    if not ratios:
        return not_tested(label, "no untrained copy measured this condition"), thresholds
    judged = judge_against_nulls(model_ratio, ratios, higher_is_better=True)
    missing = len(untrained["models"]) - len(measured)
    if missing:
        judged["note"] = f"{missing} of {len(untrained['models'])} copies could not run this condition (their not_measured)"
    return {"statistic": label, **judged}, thresholds


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
    sets, explicit = layer_sets(adapter, ctx.run.layers)

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
    results = ctx.write_results(results)
    if ctx.progress and ctx.details:
        print_summary(results)
    return results


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
    matched control, and the sets with no later layer that has an axis (an explicit --layers refuses)."""
    n_layers = loaded.adapter.shape.n_layers
    last = n_layers - 1
    missing = [layer for layer in needed if layer not in axes]
    edited_missing = sorted({layer for _, layers in sets for layer in layers} & set(missing))
    if edited_missing and explicit:
        raise ConfigError(f"layer(s) {', '.join(map(str, edited_missing))} have no entropy axis (no value column "
                          "varies across the SULA prompts at the final token): choose other --layers")
    dropped_layers = {str(layer): "no value column varies across the SULA prompts at the final token"
                      for layer in missing}
    no_control = [] if definitions != "geomprobe" else _without_control(
        axes, sorted({layer for _, layers in sets for layer in layers} - set(missing)), main_extraction, seed)
    if no_control and explicit:
        raise ConfigError(f"layer(s) {', '.join(map(str, no_control))}: the final-token values vary along the entropy "
                          "axis only, so no matched random axis exists to compare the edit with: choose other --layers")
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
                              "earlier --layers")
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
            "layer_choice": "explicit --layers" if explicit else
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


def summarise(passes: dict, operations, sets, H_bayes, n_boot: int, seed: int, last: int, n_random: int,
              positions: str, untrained: dict | None = None, controls: str = "matched",
              refusals: dict | None = None) -> dict:
    """results.json's "baseline" and "conditions" from the cached passes. The axis-entropy
    correlation is read at every layer after a set's last edited one, up to `last`, that the
    passes measured (each on its own axis), and reported per layer. Each condition's primary
    statistic (PRIMARY) is compared with the untrained copies' (null_ablations' result, or None),
    its secondary rank tests Holm-adjusted, and its "behaviour changed" thresholds calibrated on
    the copies (the fixed ones without copies). controls: what the random axes are, in words
    ("matched", or the released code's "unmatched, as released"); refusals: {condition id: why its
    controls were refused} (refused_for: no random-axis passes ran for it)."""
    measured = sorted(int(layer) for layer in passes["baseline"]["axis_entropy"])
    base = _side(passes, "baseline")
    baseline = {
        "mae_bits": mean_ci(np.abs(base["H_model"] - H_bayes), n_boot, seed),
        "pearson_H_model_H_bayes": correlation(base["H_model"], H_bayes, "pearson", n_boot, seed),
        "H_model": mean_ci(base["H_model"], n_boot, seed),
        "label_mass": mean_ci(base["label_mass"], n_boot, seed),
        "axis_entropy": passes["baseline"]["axis_entropy"],
    }
    conditions = []
    for name, op, params in operations:
        for set_name, layers in sets:
            downstream = [layer for layer in measured if max(layers) < layer <= last]
            refused = (refusals or {}).get(f"{name}/{set_name}") or []
            conditions.append(_condition(passes, name, op, params, set_name, layers, downstream, base, H_bayes,
                                         n_boot, seed, 0 if refused else n_random, positions, untrained,
                                         controls if not refused else "refused: " + "; ".join(refused)))
    across = holm({c["id"]: c["primary"]["statistic"]["p_value"] for c in conditions})
    for c in conditions:
        c["primary"]["p_holm_across_conditions"] = across[c["id"]]
    return {"baseline": baseline, "conditions": conditions}


def _side(passes: dict, name: str) -> dict:
    """One pass's label-restricted output (H_model, label_mass, ...)."""
    return restrict_to_labels(np.array(passes[name]["token_probs"]))


def _r_at(passes: dict, name: str, layer: int):
    """One pass's axis-entropy correlation at a layer (None where not measured)."""
    entry = passes[name]["axis_entropy"].get(str(layer))
    return None if entry is None else entry.get(AXIS_STATISTIC)


def _change(after, before):
    """after - before, None when either is."""
    return None if after is None or before is None else after - before


def _mean_abs(changes):
    """The mean |change| over the defined ones, None when none is."""
    changes = [abs(c) for c in changes if c is not None]
    return float(np.mean(changes)) if changes else None


def _condition(passes: dict, name: str, op: str, params: dict, set_name: str, layers: list[int],
               downstream: list[int], base: dict, H_bayes, n_boot: int, seed: int, n_random: int, positions: str,
               untrained: dict | None, controls: str) -> dict:
    """One condition of results.json: the true axis's edit, the random axes', the tests and the reading."""
    true_name = f"{name}_{set_name}_true"
    random_names = [f"{name}_{set_name}_random{draw:02d}" for draw in range(n_random)]
    edited = _side(passes, true_name)
    true, per_layer = _true_axis(passes, true_name, op, layers, downstream, base, edited, H_bayes, n_boot, seed)
    random, err_random, moved_random = _random_axes(passes, random_names, downstream, base, H_bayes)
    behaviour = true["behaviour"]
    versus = _versus_random(true, per_layer, random, err_random, moved_random, base, edited, H_bayes, n_boot, seed)
    family, adjusted = _secondary_tests(versus, per_layer)
    condition_id = f"{name}/{set_name}"
    statistic = primary_statistic(behaviour["mean_abs_dH_bits"]["value"],
                                  [d["behaviour"]["mean_abs_dH_bits"] for d in random])
    if op == "only" and random:
        statistic = {**statistic, "p_value": None, "uncalibrated": ONLY_UNCALIBRATED}
    against_untrained, thresholds = untrained_for(condition_id, untrained, statistic["log2_ratio"])
    primary = {"statistic": statistic, "untrained": against_untrained, "controls": controls}
    against = None if not random else {
        "mean_abs_dH_bits": (versus["mean_abs_dH_bits"], versus["paired_abs_dH_bits"]),
        "delta_mae_bits": (versus["delta_mae_bits"], versus["paired_error_bits"])}
    downstream_rows = [(layer, per_layer[str(layer)]["before"], per_layer[str(layer)]["after"],
                        versus["axis_r_downstream_change"][str(layer)] if random else None)
                       for layer in downstream]
    limits = {**READING_THRESHOLDS, **thresholds}
    return {
        "id": condition_id, "op": op, **params, "layer_set": set_name, "layers": layers,
        "downstream_layers": downstream, "positions": positions, "true": true, "random": random,
        "vs_random": versus, "primary": primary,
        "secondary": {"tests": list(family), "correction": "holm", "p_holm": adjusted},
        "behaviour_thresholds": thresholds,
        "reading": reading(downstream_rows, behaviour, against, limits, primary if random else None),
    }


def _true_axis(passes: dict, true_name: str, op: str, layers: list[int], downstream: list[int], base: dict,
               edited: dict, H_bayes, n_boot: int, seed: int) -> tuple[dict, dict]:
    """(the condition's "true": the true axis's behaviour change and axis-entropy correlation, its
    downstream entries per layer)."""
    true_geometry = passes[true_name]["axis_entropy"]
    per_layer = {}
    for layer in downstream:
        before, after = _r_at(passes, "baseline", layer), _r_at(passes, true_name, layer)
        per_layer[str(layer)] = {"before": before, "after": after, "change": _change(after, before),
                                 "sd_ratio": true_geometry[str(layer)]["sd_ratio"]}
    at_edited = {str(layer): {"before": _r_at(passes, "baseline", layer), "after": _r_at(passes, true_name, layer),
                              "sd_ratio": true_geometry[str(layer)]["sd_ratio"], "note": AT_EDITED_LAYER[op]}
                 for layer in layers if str(layer) in true_geometry}
    true = {
        "behaviour": behaviour_change(H_bayes, base["H_model"], edited["H_model"], base["label_mass"],
                                      edited["label_mass"], n_boot, seed),
        "axis_entropy": {
            "statistic": AXIS_STATISTIC,
            "downstream": per_layer,
            "first_downstream_layer": downstream[0] if downstream else None,
            "mean_abs_change_downstream": _mean_abs(e["change"] for e in per_layer.values()),
            "at_edited_layers": at_edited,
        },
    }
    return true, per_layer


def _random_axes(passes: dict, random_names: list[str], downstream: list[int], base: dict,
                 H_bayes) -> tuple[list[dict], list, list]:
    """(the condition's "random" entries, each draw's |error| and |dH| per prompt) for its random axes."""
    random, err_random, moved_random = [], [], []
    for draw, random_name in enumerate(random_names):
        H = _side(passes, random_name)["H_model"]
        r_random = {str(layer): _r_at(passes, random_name, layer) for layer in downstream}
        random.append({"draw": draw, "behaviour": behaviour_point(H_bayes, base["H_model"], H),
                       "downstream_r": r_random,
                       "mean_abs_change_downstream": _mean_abs(
                           _change(r_random[str(layer)], _r_at(passes, "baseline", layer)) for layer in downstream)})
        err_random.append(np.abs(H - H_bayes))
        moved_random.append(np.abs(H - base["H_model"]))
    return random, err_random, moved_random


def _versus_random(true: dict, per_layer: dict, random: list[dict], err_random: list, moved_random: list, base: dict,
                   edited: dict, H_bayes, n_boot: int, seed: int) -> dict:
    """The condition's "vs_random": where the true axis's changes fall among the random axes'."""
    behaviour = true["behaviour"]
    return {
        "delta_mae_bits": compare_with_random(behaviour["delta_mae_bits"]["value"],
                                              [d["behaviour"]["delta_mae_bits"] for d in random], "greater"),
        "mean_abs_dH_bits": compare_with_random(
            behaviour["mean_abs_dH_bits"]["value"], [d["behaviour"]["mean_abs_dH_bits"] for d in random],
            "greater"),
        "delta_pearson": compare_with_random(behaviour["delta_pearson"]["value"],
                                             [d["behaviour"]["delta_pearson"] for d in random], "abs"),
        "axis_r_downstream_change": {
            key: compare_with_random(entry["change"],
                                     [_change(d["downstream_r"][key], entry["before"]) for d in random], "abs")
            for key, entry in per_layer.items()},
        "axis_r_mean_abs_change_downstream": compare_with_random(
            true["axis_entropy"]["mean_abs_change_downstream"],
            [d["mean_abs_change_downstream"] for d in random], "greater"),
        "paired_error_bits": paired_true_vs_random(np.abs(edited["H_model"] - H_bayes), err_random,
                                                   n_boot, seed),
        "paired_abs_dH_bits": paired_true_vs_random(np.abs(edited["H_model"] - base["H_model"]),
                                                    moved_random, n_boot, seed),
    }


def _secondary_tests(versus: dict, per_layer: dict) -> tuple[dict, dict]:
    """(the secondary family {test: where}, its Holm-adjusted p's), each test's p_holm set in place."""
    family = {"delta_mae_bits": versus["delta_mae_bits"], "delta_pearson": versus["delta_pearson"],
              **{f"axis_r_downstream_change[{key}]": where
                 for key, where in versus["axis_r_downstream_change"].items()}}
    if len(per_layer) > 1:
        family["axis_r_mean_abs_change_downstream"] = versus["axis_r_mean_abs_change_downstream"]
    adjusted = holm({key: where["p_value"] for key, where in family.items()})
    for key, where in family.items():
        where["p_holm"] = adjusted[key]
    return family, adjusted


# ----------------------------------------------------------------------------------------------
# Printing


def _signed(value, digits: int = 3) -> str:
    return "-" if value is None else f"{value:+.{digits}f}"


def _plain(value, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def print_summary(results: dict) -> None:
    console = table_console()
    baseline = results["baseline"]
    console.print(f"baseline: SULA MAE {baseline['mae_bits']['value']:.3f} bits, Pearson(H_model, H_bayes) "
                  f"{_plain(baseline['pearson_H_model_H_bayes']['value'], 3)}; axis-entropy Spearman rho per layer "
                  + ", ".join(f"{layer}: {_plain(e.get(AXIS_STATISTIC))}"
                              for layer, e in baseline["axis_entropy"].items()))
    primary_table, geometry_table, behaviour_table = _summary_tables(results)
    for c in results["conditions"]:
        _primary_row(primary_table, c)
        _geometry_rows(geometry_table, c)
        _behaviour_row(behaviour_table, c)
    console.print(primary_table)
    console.print(geometry_table)
    console.print(behaviour_table)
    for c in results["conditions"]:
        console.print(f"{c['id']}: {c['reading']}")
    _print_thresholds(console, results)


def _summary_tables(results: dict):
    """The summary's three empty tables: primary, downstream geometry and behaviour."""
    from rich.table import Table

    settings = results["settings"]
    smallest = settings.get("smallest_p")
    untrained = results.get("untrained_null")
    subtitle = (f"{results['model']}, {settings['n_per_k'] * len(settings['k_values'])} prompts, positions "
                f"{settings['positions']}, {settings['n_random']} matched random axes")
    primary_table = Table(title=f"primary: mean |dH| (bits) of the true axis's edit against the matched random axes' "
                                f"(rank, empirical p, smallest {_plain(smallest)}) and log2(true / random mean) "
                                f"against untrained copies on their own axes "
                                f"({untrained['description'] if untrained else 'none: --null off'}): {subtitle}")
    for column in ("condition", "|dH| true", "random", "rank", "p", "log2 ratio", "untrained", "vs untrained",
                   "p (rule)"):
        primary_table.add_column(column, justify="right", no_wrap=True)
    geometry_table = Table(title="secondary: axis-entropy Spearman rho(v'.u, H_model) downstream of the edit (each "
                                 "layer on its own axis); p Holm-adjusted over each condition's secondary tests")
    for column in ("condition", "edited", "layer", "base", "true", "random mean", "|change| rank", "p Holm"):
        geometry_table.add_column(column, justify="right", no_wrap=True)
    behaviour_table = Table(title="secondary: the output, SULA behaviour under the interventions (change vs the "
                                  "unperturbed pass); p Holm-adjusted; 'changed at': where a change counts")
    for column in ("condition", "MAE bits [95% CI]", "dMAE true", "random", "rank", "p Holm", "dPearson true",
                   "random", "p Holm", "changed at"):
        behaviour_table.add_column(column, justify="right", no_wrap=True)
    return primary_table, geometry_table, behaviour_table


def _primary_row(table, c: dict) -> None:
    """One condition's row of the primary table: its statistic and where it stands among the untrained copies."""
    stat, against = c["primary"]["statistic"], c["primary"]["untrained"]
    if against is None or against.get("status") == "not tested" or "n_nulls" not in against:
        null_cells = ["-", "not tested" if against else "-", "-"]
    else:
        spread = "" if against["null_sd"] is None else f" +- {against['null_sd']:.2f}"
        status = {"above untrained": "better", "below untrained": "worse"}.get(
            against["status"], against["status"].replace(" from untrained", ""))
        null_cells = [f"{against['null_mean']:+.2f}{spread}", status, f"{against['p_value']:.2f} ({against['rule']})"]
    table.add_row(c["id"], _plain(stat["true"], 4), _plain(stat["random_mean"], 4), _rank(stat),
                  _plain(stat["p_value"]), _signed(stat["log2_ratio"], 2), *null_cells)


def _geometry_rows(table, c: dict) -> None:
    """One condition's rows of the downstream table: its first and last downstream layers, and their mean."""
    geometry, versus = c["true"]["axis_entropy"], c["vs_random"]
    downstream = c["downstream_layers"]
    shown = downstream if len(downstream) <= 2 else [downstream[0], downstream[-1]]
    for layer in shown:
        entry, where = geometry["downstream"][str(layer)], versus["axis_r_downstream_change"][str(layer)]
        random_mean = (None if where["random_mean"] is None or entry["before"] is None
                       else entry["before"] + where["random_mean"])
        table.add_row(c["id"], ",".join(map(str, c["layers"])), str(layer), _plain(entry["before"]),
                      _plain(entry["after"]), _plain(random_mean), _rank(where), _plain(where.get("p_holm")))
    if len(downstream) > 2:
        where = versus["axis_r_mean_abs_change_downstream"]
        table.add_row(c["id"], ",".join(map(str, c["layers"])), f"mean |change|, {downstream[0]}-{downstream[-1]}", "",
                      _plain(geometry["mean_abs_change_downstream"]), _plain(where["random_mean"]), _rank(where),
                      _plain(where.get("p_holm")))


def _behaviour_row(table, c: dict) -> None:
    """One condition's row of the behaviour table: MAE, its change and Pearson's, and where a change counts."""
    behaviour, versus = c["true"]["behaviour"], c["vs_random"]
    mae, dmae, dr = behaviour["mae_bits"], versus["delta_mae_bits"], versus["delta_pearson"]
    limits = c.get("behaviour_thresholds") or {}
    changed_at = (f"{_plain(limits.get('mae_bits'), 3)} bits, {_plain(limits.get('pearson'), 3)}"
                  + ("" if "source" in limits else " (fixed)"))
    table.add_row(c["id"], f"{mae['value']:.3f} [{mae['ci95'][0]:.3f}, {mae['ci95'][1]:.3f}]", _signed(dmae["true"]),
                  _signed(dmae["random_mean"]), _rank(dmae), _plain(dmae.get("p_holm")),
                  _signed(behaviour["delta_pearson"]["value"]), _signed(dr["random_mean"]), _plain(dr.get("p_holm")),
                  changed_at)


def _print_thresholds(console, results: dict) -> None:
    """The summary's closing lines: the reading thresholds and paper III's numbers."""
    t = results["thresholds"]
    behaviour_words = ("|dMAE| and |dPearson| under each condition's 'changed at' (the untrained copies' 95th "
                       "percentile of the same change)" if results.get("untrained_null") else
                       f"|dMAE| < {t['mae_bits']} bits and |dPearson| < {t['pearson']} (fixed: no untrained copies)")
    console.print(f"thresholds: downstream |rho| < {t['axis_r_zero']} no correlation left, rho change >= "
                  f"{t['axis_r_change']}, behaviour unchanged when {behaviour_words}; {t['vs_random']}. At the edited "
                  f"layers themselves a cut makes rho 0 by construction (results: true.axis_entropy.at_edited_layers), "
                  f"which is no evidence.")
    ref = results["reference_paper_iii"]
    multi = ref["multi_layer_true_cut"]
    console.print(f"paper III (Pythia-410M): axis-entropy r {ref['axis_entropy_r_baseline'][0]}-"
                  f"{ref['axis_entropy_r_baseline'][1]} -> about 0 under the true cut, random cuts change it by about "
                  f"{ref['single_layer_random_cut_change']}; multi-layer cut r {multi['axis_entropy_r'][0]} -> "
                  f"{multi['axis_entropy_r'][1]}, SULA MAE and correlation change "
                  f"{multi['sula_mae_and_correlation_change']}; {ref['note']}")


def _rank(where: dict) -> str:
    return "-" if where.get("rank") is None else f"{where['rank']}/{where['of']}"


def check_options(loaded, run_config, options) -> None:
    """The layer choice and the label pair, before anything is written."""
    parse_ops(options.ops, options.cut_lambda)
    layer_sets(loaded.adapter, run_config.layers)
    sula_setup(loaded, options, run_config.seed)


register_suite("ablation", AblationConfig, run_ablation_suite,
               "entropy-axis interventions (cut, only, shift) against random axes, on the SULA prompts",
               unsupported=unsupported, check=check_options,
               schema=AblationResults, schema_version=SCHEMA_VERSION)
