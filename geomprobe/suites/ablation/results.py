"""The ablation suite's results: the layout of <run>/ablation/results.json (checked before it is written; RESULTS_SCHEMA.md
lists it)."""

from __future__ import annotations

from typing import TypedDict

from geomprobe.analysis.estimate import Estimate
from geomprobe.suites.schema import Header, NullComparison

SCHEMA_VERSION = 3  # breaking changes of this layout; 3: with the header, untrained nulls and downstream ablation


class _RandomAxesComparisonRequired(TypedDict):
    true: float | None  # the true axis's value
    random: list  # the random axes' values
    n_random: int  # random axes with a value
    alternative: str  # greater (is the true value larger?) or abs (is its magnitude larger?)
    p_min: float  # 1 / (1 + n_random): the smallest p these random axes can give
    random_mean: float | None  # mean over the random axes
    random_sd: float | None  # their standard deviation
    random_min: float | None  # their smallest value
    random_max: float | None  # their largest value
    rank: int | None  # the true axis's rank among all n_random + 1 (1 = largest; ties count against it)
    of: int | None  # n_random + 1
    p_value: float | None  # empirical one-sided p: (1 + #random >= true) / (1 + n_random)


class RandomAxesComparison(_RandomAxesComparisonRequired, total=False):
    p_holm: float | None  # a secondary test's p_value Holm-adjusted over its condition's secondary tests
    measure: str  # the primary statistic's measure (mean_abs_dH_bits)
    log2_ratio: float | None  # the primary statistic: log2(true / random_mean), compared with untrained copies
    uncalibrated: str  # why p_value is None though the rank is given (the `only` operation: no matched control)


class AblationDownstreamLayer(TypedDict):
    before: float | None  # Spearman rho(v.u, H_model) at this layer, on its own axis, unperturbed
    after: float | None  # the same re-extracted under the edit (with the edited pass's H_model)
    change: float | None  # after - before
    sd_ratio: float | None  # std of the edited pass's coordinate / sigma_u


class AblationEditedLayer(TypedDict):
    before: float | None  # Spearman rho(v.u, H_model) at this edited layer, unperturbed
    after: float | None  # the same under the edit: by construction (a cut makes it 0), not evidence
    sd_ratio: float | None  # std of the edited coordinate / sigma_u (about 0 after a cut)
    note: str  # what the edit makes of this layer's rho by construction


class AblationAxisEntropy(TypedDict):
    statistic: str  # spearman: the statistic the axes are oriented by (sula_metrics.fit_axis)
    downstream: dict[str, AblationDownstreamLayer]  # layer -> rho at each layer after the last edited one: the evidence
    first_downstream_layer: int | None  # the layer right after the last edited one (the figures' headline)
    mean_abs_change_downstream: float | None  # mean of abs(after - before) over the downstream layers (never a signed mean)
    at_edited_layers: dict[str, AblationEditedLayer]  # layer -> rho at the edited layers: by construction, not evidence


class AblationTrueAxis(TypedDict):
    behaviour: dict  # the output: MAE, Pearson(H_model, H_bayes) and their changes, mean abs dH, each an Estimate
    axis_entropy: AblationAxisEntropy  # the axis-entropy correlation downstream of the edit


class AblationRandomDraw(TypedDict):
    draw: int  # index of the random axis (random_axes.npz row)
    behaviour: dict  # the point values of the output's changes
    downstream_r: dict[str, float | None]  # layer -> rho after the edit along this random axis
    mean_abs_change_downstream: float | None  # mean over the downstream layers of abs(rho change)


class AblationVersusRandom(TypedDict):
    delta_mae_bits: RandomAxesComparison  # change in SULA MAE, alternative greater
    mean_abs_dH_bits: RandomAxesComparison  # mean abs change of H_model, alternative greater
    delta_pearson: RandomAxesComparison  # change of Pearson(H_model, H_bayes), alternative abs
    axis_r_downstream_change: dict[str, RandomAxesComparison]  # layer -> change of rho at that downstream layer, alternative abs
    axis_r_mean_abs_change_downstream: RandomAxesComparison  # mean abs rho change over the downstream layers, alternative greater
    paired_error_bits: Estimate  # per prompt abs(H_model - H_bayes), true minus mean random, paired bootstrap
    paired_abs_dH_bits: Estimate  # per prompt abs(H_model change), true minus mean random, paired bootstrap


class _AblationConditionRequired(TypedDict):
    id: str  # <operation>/<layer set>, e.g. cut/L1
    op: str  # cut | only | shift
    layer_set: str  # L<layer> or multi
    layers: list[int]  # the edited layers
    downstream_layers: list[int]  # the layers after the last edited one with an axis: where r is measured
    positions: str  # all | final
    true: AblationTrueAxis  # the true entropy axis
    random: list[AblationRandomDraw]  # each random axis
    vs_random: AblationVersusRandom  # where the true axis falls among the random ones
    reading: str  # one line: the downstream layers, then the output, against the random axes


class AblationPrimary(TypedDict, total=False):
    statistic: RandomAxesComparison  # mean abs dH of the true axis among the matched random axes: rank, p, log2_ratio
    untrained: NullComparison | None  # log2_ratio against the untrained copies' own (None: --null off)
    p_holm_across_conditions: float | None  # statistic.p_value Holm-adjusted over the run's conditions
    controls: str  # matched, unmatched as released (paper-code), or "refused: <why>" (no random-axis passes)


class AblationCondition(_AblationConditionRequired, total=False):
    cut_lambda: float  # cut strength
    shift_c: float  # shift in units of sigma_u
    primary: AblationPrimary  # the pre-declared primary statistic (settings.primary) and its tests
    secondary: dict  # tests: the secondary rank tests (in vs_random), correction holm, p_holm per test
    behaviour_thresholds: dict  # mae_bits, pearson: behaviour changed beyond these (calibrated on copies, or fixed)


class AblationUntrained(TypedDict):
    spec: str  # the --null value
    description: str  # the untrained copies' names
    models: list  # per copy: name, seed, conditions (per id: rank, log2_ratio, behaviour changes), not_measured
    note: str  # how the copies are run


class _AblationResultsRequired(Header):
    settings: dict  # SULA spec, ops, layer sets, n_random, smallest_p, prefix_reuse, stacked_conditions (+ notes, groups)
    axis: dict  # where the axes came from, their orientation (Spearman), sigma_u and columns per layer
    baseline: dict  # the unedited pass: MAE, Pearson, axis-entropy Spearman rho per layer
    conditions: list[AblationCondition]  # per operation and layer set: output and downstream layers vs random axes, reading
    thresholds: dict  # what the one-line reading calls small and large (behaviour: the fallback without copies)
    reference_paper_iii: dict  # paper values, for comparison only


class AblationResults(_AblationResultsRequired, total=False):
    untrained_null: AblationUntrained | None  # every condition on untrained copies, each on its own axis (None: off)


# its nested types, listed in RESULTS_SCHEMA.md
NESTED = (AblationCondition, AblationAxisEntropy, AblationTrueAxis, AblationRandomDraw, AblationVersusRandom,
          RandomAxesComparison, AblationDownstreamLayer, AblationEditedLayer, AblationPrimary, AblationUntrained)
