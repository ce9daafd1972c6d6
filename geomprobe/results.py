"""The results schema, and the reader of run directories.

Every <run>/<suite>/results.json is one of the TypedDicts below. It starts with the header
(schema_version, suite, model, geomprobe_version); SCHEMA_VERSION counts breaking changes of any
suite's layout. An estimate is always geomprobe.analysis.estimate.Estimate {value, ci95, method,
n}; a few headline scalars sit flat beside their interval (pc1 and pc1_ci95). RESULTS_SCHEMA.md
in the repository is generated from these types (`schema_markdown()`; a test keeps it current),
and every suite's results are checked against its type before they are written.

    from geomprobe import load_run
    run = load_run("runs/pythia-410m")
    run.results["sula"]["conditions"]["main"]["mae_bits"]["value"]
    frame = run.table("sula")                      # per-prompt rows as a pandas DataFrame
"""

from __future__ import annotations

import json
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

from geomprobe.analysis.estimate import Estimate
from geomprobe.errors import RunDirectoryError

SCHEMA_VERSION = 3  # 1: no header (before the suite registry); 2: before untrained nulls and downstream ablation
HEADER = ("schema_version", "suite", "model", "geomprobe_version")


class Header(TypedDict):
    schema_version: int  # SCHEMA_VERSION of the geomprobe that wrote the file
    suite: str  # the registered suite name
    model: str  # the model spec the run was given
    geomprobe_version: str  # geomprobe.__version__ that wrote the file


# ----------------------------------------------------------------------------------------------
# extract


class LayerEntropy(TypedDict):
    layer: int  # layer index
    attn_entropy_bits: float  # mean over prompts of the head-mean final-token attention entropy
    ci95: list  # bootstrap 95% CI of attn_entropy_bits over prompts
    attn_entropy_normalised: float  # the same divided by log2(visible keys)
    normalised_ci95: list  # its bootstrap 95% CI


class _ExtractRequired(Header):
    n_prompts: int  # prompts extracted
    layers: list[LayerEntropy]  # one entry per extracted layer
    n_tokens: dict  # {"min", "max"} prompt length in tokens


class ExtractResults(_ExtractRequired, total=False):
    next_entropy_bits: Estimate  # mean next-token entropy over prompts (causal LMs only)


# ----------------------------------------------------------------------------------------------
# geometry and domain


class _PromptsRequired(TypedDict):
    source: str  # the file, corpus or wind-tunnel task the prompts came from
    n: int  # prompts used


class PromptsUsed(_PromptsRequired, total=False):
    stratified: bool  # drawn by next-token-entropy quintile


class NullComparison(TypedDict, total=False):
    statistic: str  # what is compared
    model: float  # the model's value
    nulls: list  # each null model's value, in the order of UntrainedNull.models
    n_nulls: int  # finite null values used
    n_nulls_not_finite: int  # null values that could not be computed (dropped)
    null_mean: float  # their mean
    null_sd: float | None  # their standard deviation (ddof 1)
    null_prediction_interval: list | None  # where one more untrained copy would fall (90%, t over the nulls)
    t: float | None  # (model - null mean) / (sd sqrt(1 + 1/N))
    rank: int  # 1 + the nulls at least as good as the model
    of: int  # N + 1
    rule: str  # rank | t | none: how the status was decided (geomprobe.analysis.null_comparison)
    rule_note: str  # why that rule
    alpha: float  # one-sided level of each direction
    p_value: float  # one-sided p of "above untrained" under the rule
    p_value_below: float  # the same for "below untrained"
    p_rank: float  # the rank rule's p, whatever the rule
    mde: dict  # sd, value: the difference detected half the time (Gaussian nulls); power; note
    seed_check: str  # how seed-to-seed variation was checked
    difference: Estimate  # model - null mean, and model minus the prediction interval of one more copy
    higher_is_better: bool  # False for key |cos| (lower: more orthogonal)
    status: str  # above untrained | indistinguishable from untrained | below untrained | not tested
    note: str  # why a comparison was not tested


class UntrainedNull(TypedDict):
    spec: str  # the --null value
    description: str  # the null models' names
    models: list  # per null model: name, kind, seed or spec, pc1, pc12, focusing, key_layer_mean, ...
    comparisons: dict[str, NullComparison]  # pc1, pc12, keys, focusing
    note: str  # how the comparison is made


class PaperCodeRow(TypedDict):
    quantity: str  # the geomprobe.paper_code.DEFINITIONS key
    label: str  # what the row shows, in words
    geomprobe: float | None  # geomprobe's number as the suite reports it (None: not a geomprobe headline)
    paper_code: float | None  # the same quantity as the papers' released code defines it, on the same arrays
    geomprobe_how: str  # geomprobe's definition, in one line
    paper_code_how: str  # the released script and its definition, in one line
    published: float | None  # the figure the papers or their code report, where one exists
    published_source: str | None  # where that figure comes from
    same_definition: bool  # both define the quantity alike (the numbers then agree to rounding)
    released_file: str | None  # the released code's file


class PaperCodeTable(TypedDict, total=False):
    definitions: str  # paper-code | paper-code-as-released
    note: str  # how to read the rows
    rows: list[PaperCodeRow]  # the side-by-side table
    scripts: dict  # each released script's value-manifold numbers (geomprobe.paper_code.released_value_manifold)
    calibration_per_k: dict  # sula: the released MAE and Pearson per k and "all"
    embedding_key_draws: list  # geometry: the embedding-cosine key statistic of 10 seeded draws
    released_values: str  # sula, paper-code-as-released: what the released code's "values" are on this model


class _GeometryRequired(Header):
    shape: dict  # the adapter's shape: n_layers, n_heads, n_kv_heads, d_head, d_model, ...
    prompts: PromptsUsed  # the stratified sample
    value_manifold: dict  # pc1, pc1_ci95, pc12, pc12_ci95, pr, shuffle_null, gaussian_null, final_tokens, ...
    key_orthogonality: dict  # layer_mean, fraction_below, analytic_gaussian, empirical_gaussian, baselines, ...
    attention_focusing: dict  # focusing, focusing_ci95, layer_entropy_bits, normalised, ...
    untrained_null: UntrainedNull | None  # the model against untrained copies (None with --null off)
    verdict: dict  # per criterion: met, the numbers, vs_untrained; label, n_met, null, summary


class GeometryResults(_GeometryRequired, total=False):
    definitions: str  # geomprobe | paper-code | paper-code-as-released (--definitions)
    paper_code: PaperCodeTable  # with --definitions paper-code: geomprobe's and the released code's numbers


class DomainResults(Header):
    readout: str  # values | z | resid
    layer: int  # the layer read (the last)
    sets: dict  # set label -> value manifold of that set (+ gain_over_mixed, gain_vs_untrained for restricted sets)
    untrained_null: UntrainedNull | None  # each restricted set's PC1+PC2 gain against untrained copies
    caveat: str  # what a PC1+PC2 gain does not isolate


# ----------------------------------------------------------------------------------------------
# sula and ablation


class SulaPerK(TypedDict):
    k: int  # examples in the prompt
    n: int  # prompts with this k
    H_bayes: Estimate  # mean exact entropy (bits)
    H_model: Estimate  # mean entropy of the model's next-token distribution restricted to the two labels (bits)
    mae_bits: Estimate  # mean |H_model - H_bayes|
    kl_bits: float  # mean KL(Bayes || model) over the labels, bits
    label_mass: float  # mean next-token probability on the two labels
    pc1: Estimate  # mean coordinate on the entropy axis
    rho_pc1_H_bayes: Estimate  # within this k: Spearman rho(PC1, H_bayes), permutation p; null where one is constant (k = 0, 1)


class _SulaConditionRequired(TypedDict):
    labels: list  # the label pair of this condition
    bayes: str  # what Bayes says under this condition
    pc1_basis: str  # own (main) or projected into the main condition's basis
    n_prompts: int  # prompts in the condition
    mae_bits: Estimate  # mean |H_model - H_bayes| (bits): paper III's SULA MAE
    H_bayes: Estimate  # mean exact entropy
    H_model: Estimate  # mean model entropy over the labels
    kl_bits: Estimate  # mean KL(Bayes || model)
    label_mass: Estimate  # mean next-token mass on the labels
    pearson_H_model_H_bayes: Estimate  # calibration: Pearson r over prompts
    spearman_H_model_H_bayes: Estimate  # Spearman rho over prompts
    rho_pc1_H_bayes: Estimate  # Spearman rho(PC1, H_bayes) over all k: confounded with k (H_bayes falls with k)
    rho_pc1_H_bayes_given_k: Estimate  # the headline: Spearman partial rho(PC1, H_bayes) given k (one indicator per k)
    rho_pc1_H_bayes_within_k: Estimate  # prompt-weighted mean of the within-k Spearman rhos; pvalue: PC1 shuffled within each k
    rho_pc1_H_model: Estimate  # Spearman rho of the axis coordinate with the model's entropy
    rho_k_pc1: Estimate  # Spearman rho of the number of examples with the axis coordinate: the confound itself
    pc1: Estimate  # mean axis coordinate
    mae_baselines: dict  # held-out half: split, MAE of model, constant, k_only, k_only_median, zero; model_minus_k_only
    per_k: list[SulaPerK]  # the same per number of examples


class SulaCondition(_SulaConditionRequired, total=False):
    rho_pc1_p_model_l1: Estimate  # Spearman rho of the axis coordinate with the model's p(L1): signed evidence
    next_entropy_bits: Estimate  # mean full-vocabulary next-token entropy
    rho_pc1_H_bayes_given_n_tokens: Estimate  # Spearman partial correlation given the prompt length in tokens
    rho_pc1_H_bayes_given_k_n_tokens: Estimate  # Spearman partial correlation given k and the prompt length in tokens
    rho_n_tokens_pc1: Estimate  # Spearman rho of the prompt length in tokens with the axis coordinate: the length confound


class _SulaRequired(Header):
    settings: dict  # the SULA spec, controls, label choice, example prompts, n_boot
    axis: dict  # layer, readout, pc1_explained, sign, file ("axis.npz"), note
    conditions: dict[str, SulaCondition]  # main and each control
    per_layer: list  # per main layer: pc1_explained, rho_pc1_H_bayes, rho_pc1_H_model
    untrained_null: UntrainedNull | None  # main prompts on untrained copies: mae_bits, abs_rho_pc1_H_bayes_given_k
    reference_paper_iii: dict  # paper values, for comparison only


class SulaResults(_SulaRequired, total=False):
    definitions: str  # geomprobe | paper-code | paper-code-as-released (--definitions)
    paper_code: PaperCodeTable  # with --definitions paper-code: geomprobe's and the released code's numbers


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
    controls: str  # what the random axes are: matched, or unmatched as released (--definitions paper-code)


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


# ----------------------------------------------------------------------------------------------
# mechanisms


class _MechanismsRequired(Header):
    shape: dict  # the adapter's shape
    settings: dict  # n_sequences, n_eval, n_reference, init_seeds, n_boot, seed, curves
    windtunnel: bool  # whether the model is a wind tunnel (task-based measurements)
    reference: dict  # paper statements, for comparison only


class MechanismsResults(_MechanismsRequired, total=False):
    qk_alignment: dict  # per-layer estimates of attention entropy, evidence mass, Q-K cosines
    attention_focusing: dict | None  # focusing from the rows read (None where it is undefined)
    task: dict  # wind tunnels: the task and its evidence definition
    frame: dict  # wind tunnels: layer-0 frame orthogonality against its baselines
    ablation: dict  # wind tunnels: head mean-ablation and layer-skip deltas
    two_timescale: dict  # wind tunnels: frame-precision curves and settling steps
    prompts: PromptsUsed  # other models: the prompts read
    prompt_set: dict  # wind tunnels given --prompts: the same on those prompts
    untrained_null: UntrainedNull | None  # evidence_mass, cos_evidence_minus_other (wind tunnels) and focusing


SCHEMAS: dict[str, type] = {"extract": ExtractResults, "geometry": GeometryResults, "domain": DomainResults,
                            "sula": SulaResults, "ablation": AblationResults, "mechanisms": MechanismsResults}


def register_schema(suite: str, schema: type) -> None:
    """The results type of a suite added with register_suite (optional: without one, only the
    header is checked)."""
    SCHEMAS[suite] = schema


def with_header(suite: str, model: str, results: dict) -> dict:
    from geomprobe import __version__

    body = {k: v for k, v in results.items() if k not in HEADER}
    return {"schema_version": SCHEMA_VERSION, "suite": suite, "model": model, "geomprobe_version": __version__,
            **body}


def _hints(schema: type) -> dict:
    return typing.get_type_hints(schema)


def schema_problems(suite: str, data: dict) -> list[str]:
    """What in `data` does not match the suite's results type: missing required keys, unknown keys,
    and values of the wrong kind (checked one level into nested TypedDicts). Empty when it matches."""
    if suite not in SCHEMAS:  # a plugin suite without a declared type: only its header is checked
        return [f"{suite}: missing {key}" for key in HEADER if key not in data]
    return _problems(SCHEMAS[suite], data, suite)


def _problems(schema: type, data, where: str) -> list[str]:
    if not isinstance(data, dict):
        return [f"{where}: expected an object, got {type(data).__name__}"]
    hints = _hints(schema)
    problems = [f"{where}: missing {key}" for key in sorted(schema.__required_keys__) if key not in data]
    problems += [f"{where}: unknown key {key}" for key in data if key not in hints]
    for key, hint in hints.items():
        if key in data:
            problems += _value_problems(hint, data[key], f"{where}.{key}")
    return problems


def _value_problems(hint, value, where: str) -> list[str]:
    origin = typing.get_origin(hint)
    if origin in (typing.Required, typing.NotRequired):
        return _value_problems(typing.get_args(hint)[0], value, where)
    if origin in (typing.Union, __import__("types").UnionType):
        options = typing.get_args(hint)
        if any(not _value_problems(option, value, where) for option in options):
            return []
        return [f"{where}: {type(value).__name__} is none of {', '.join(getattr(o, '__name__', str(o)) for o in options)}"]
    if hint is type(None):
        return [] if value is None else [f"{where}: expected null"]
    if isinstance(hint, type) and typing.is_typeddict(hint):
        return _problems(hint, value, where)
    base = origin or hint
    if base is Any:
        return []
    if base is dict and isinstance(value, dict) and len(typing.get_args(hint)) == 2:
        item = typing.get_args(hint)[1]
        return [p for k, v in value.items() for p in _value_problems(item, v, f"{where}.{k}")]
    if base is list and isinstance(value, list) and typing.get_args(hint):
        item = typing.get_args(hint)[0]
        return [p for i, v in enumerate(value) for p in _value_problems(item, v, f"{where}[{i}]")]
    expected = {float: (int, float), int: (int,), str: (str,), bool: (bool,), dict: (dict,), list: (list,)}
    if base in expected and (not isinstance(value, expected[base]) or (base is int and isinstance(value, bool))):
        return [f"{where}: expected {base.__name__}, got {type(value).__name__}"]
    return []


def check_results(suite: str, data: dict) -> None:
    """Raise (a bug, not a user error) when a suite's results do not match its declared type."""
    problems = schema_problems(suite, data)
    if problems:
        raise TypeError(f"{suite} results do not match geomprobe.results.{SCHEMAS.get(suite, Header).__name__}: "
                        + "; ".join(problems[:8]))


def schema_markdown() -> str:
    """RESULTS_SCHEMA.md: every suite's results type, generated from the TypedDicts above."""
    lines = ["# Results schema", "",
             "Generated from `geomprobe/results.py` by `geomprobe.results.schema_markdown()`; a test keeps this "
             "file current. Every `<run>/<suite>/results.json` is one of these objects.", "",
             f"Schema version: **{SCHEMA_VERSION}**.", "",
             "An *estimate* is always `{value, ci95, method, n}` (`geomprobe.analysis.estimate.Estimate`): "
             "`value` the point estimate (null when undefined), `ci95` `[low, high]`, `method` how both were "
             "made, `n` the units behind it; `pvalue` and `note` may follow.", ""]
    comments = _field_comments()
    for suite, schema in SCHEMAS.items():
        lines += [f"## {suite}: `{schema.__name__}`", "", "| key | type | required | meaning |", "|---|---|---|---|"]
        for key, hint in _hints(schema).items():
            required = "yes" if key in schema.__required_keys__ else "no"
            lines.append(f"| `{key}` | `{_cell(_type_name(hint))}` | {required} | {_cell(comments.get((schema, key), ''))} |")
        lines.append("")
    nested = [LayerEntropy, PromptsUsed, UntrainedNull, NullComparison, SulaCondition, SulaPerK, AblationCondition,
              AblationAxisEntropy, AblationTrueAxis, AblationRandomDraw, AblationVersusRandom, RandomAxesComparison,
              AblationDownstreamLayer, AblationEditedLayer, AblationPrimary, AblationUntrained]
    for schema in nested:
        lines += [f"### `{schema.__name__}`", "", "| key | type | required | meaning |", "|---|---|---|---|"]
        for key, hint in _hints(schema).items():
            required = "yes" if key in schema.__required_keys__ else "no"
            lines.append(f"| `{key}` | `{_cell(_type_name(hint))}` | {required} | {_cell(comments.get((schema, key), ''))} |")
        lines.append("")
    return "\n".join(lines)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _type_name(hint) -> str:
    origin = typing.get_origin(hint)
    if origin in (typing.Required, typing.NotRequired):
        return _type_name(typing.get_args(hint)[0])
    if origin in (typing.Union, __import__("types").UnionType):
        return " | ".join(_type_name(a) for a in typing.get_args(hint))
    if hint is type(None):
        return "null"
    if origin is not None:
        return f"{origin.__name__}[{', '.join(_type_name(a) for a in typing.get_args(hint))}]"
    return getattr(hint, "__name__", str(hint))


def _field_comments() -> dict:
    """(class, key) -> the comment written after the field in this file."""
    import inspect
    import re

    source = inspect.getsource(__import__(__name__, fromlist=["x"]))
    out, bases, current = {}, {}, None
    classes = {name: obj for name, obj in globals().items() if isinstance(obj, type) and typing.is_typeddict(obj)}
    for line in source.splitlines():
        match = re.match(r"class (\w+)\(([^)]*)\)", line)
        if match:
            current = classes.get(match.group(1))
            bases[current] = [classes[b.strip()] for b in match.group(2).split(",") if b.strip() in classes]
            continue
        match = re.match(r"    (\w+): [^#]+#\s*(.*)$", line)
        if current is not None and match:
            out[(current, match.group(1))] = match.group(2).strip()

    def inherit(schema, key):
        if (schema, key) in out:
            return out[(schema, key)]
        for base in bases.get(schema, []):
            text = inherit(base, key)
            if text:
                return text
        return ""

    return {(schema, key): inherit(schema, key) for schema in classes.values() for key in _hints(schema)}
    return out


# ----------------------------------------------------------------------------------------------
# reading a run directory


@dataclass
class Run:
    """A run directory as written by geomprobe.run: its manifest and every suite's results."""

    path: Path
    manifest: dict
    results: dict[str, dict] = field(default_factory=dict)  # suite -> results.json (typed as SCHEMAS[suite])
    notes: list[str] = field(default_factory=list)

    @property
    def suites(self) -> list[str]:
        return list(self.results)

    def status(self, suite: str) -> str | None:
        entry = (self.manifest.get("suites") or {}).get(suite)
        return entry.get("status") if isinstance(entry, dict) else None

    def rows(self, suite: str, condition: str | None = None) -> list[dict]:
        """Per-prompt rows of a suite (one dict per prompt): sula and ablation per condition (all
        conditions, with a `condition` column, when None); extract and geometry from their
        extraction arrays (prompt id, next-token entropy, length, head-mean attention entropy per
        layer)."""
        if suite == "sula":
            return self._sula_rows(condition)
        if suite == "ablation":
            return self._ablation_rows(condition)
        if suite in ("extract", "geometry"):
            return self._extraction_rows(self.path / ("extraction" if suite == "extract" else "geometry/extraction"))
        raise RunDirectoryError(f"no per-prompt table for the {suite} suite: tables exist for extract, geometry, "
                                "sula and ablation")

    def table(self, suite: str, condition: str | None = None):
        """rows(suite, condition) as a pandas DataFrame (pandas is optional: `pip install pandas`)."""
        try:
            import pandas as pd
        except ImportError:
            raise RunDirectoryError("Run.table needs pandas: pip install pandas (or use Run.rows for plain dicts)") \
                from None
        return pd.DataFrame(self.rows(suite, condition))

    def _sula_rows(self, condition: str | None) -> list[dict]:
        work = self.path / "sula"
        files = sorted(work.glob("prompts-*.jsonl"), key=lambda f: (f.stem != "prompts-main", f.stem))
        if not files:
            raise RunDirectoryError(f"{work} has no prompts-<condition>.jsonl: run the sula suite first")
        names = [f.stem.removeprefix("prompts-") for f in files]
        if condition is not None and condition not in names:
            raise RunDirectoryError(f"no sula condition '{condition}' in {work}: it has {', '.join(names)}")
        rows = []
        for name, path in zip(names, files):
            if condition is None or name == condition:
                rows += [{"condition": name, **json.loads(line)} for line in path.read_text().splitlines()
                         if line.strip()]
        return rows

    def _ablation_rows(self, condition: str | None) -> list[dict]:
        import numpy as np

        from geomprobe.analysis.sula_metrics import restrict_to_labels

        work = self.path / "ablation" / "conditions"
        files = sorted(work.glob("*.json"))
        if not files:
            raise RunDirectoryError(f"{work} has no passes: run the ablation suite first")
        names = [f.stem for f in files]
        if condition is not None and condition not in names:
            raise RunDirectoryError(f"no ablation condition '{condition}' in {work}: it has {', '.join(names)}")
        rows = []
        for name, path in zip(names, files):
            if condition is not None and name != condition:
                continue
            side = restrict_to_labels(np.array(json.loads(path.read_text())["token_probs"]))
            rows += [{"condition": name, "prompt": i, "p_model_l1": float(side["p_model_l1"][i]),
                      "H_model": float(side["H_model"][i])} for i in range(len(side["H_model"]))]
        return rows

    def _extraction_rows(self, directory: Path) -> list[dict]:
        from geomprobe.extraction import load_extraction

        if not (directory / "meta.json").exists():
            raise RunDirectoryError(f"{directory} holds no finished extraction")
        extraction = load_extraction(directory)
        head_mean = extraction["attn_entropy_bits"].mean(axis=2)
        rows = []
        for i, prompt_id in enumerate(extraction.prompt_ids):
            row = {"id": prompt_id, "n_tokens": int(extraction["n_tokens"][i])}
            if "next_entropy_bits" in extraction.arrays:
                row["next_entropy_bits"] = float(extraction["next_entropy_bits"][i])
            for column, layer in enumerate(extraction.layers):
                row[f"attn_entropy_bits_L{layer}"] = float(head_mean[i, column])
            rows.append(row)
        return rows


def load_run(path: str | Path) -> Run:
    """The manifest and the results of every suite in a `geomprobe run` directory (what
    geomprobe.run returns, or a CLI run's --out).

        results = load_run("runs/pythia-410m")
        results.suites                                  # suites with a results.json, in run order
        results.status("sula")                          # complete | failed | interrupted | skipped | running
        results.results["sula"]["conditions"]["main"]["mae_bits"]   # RESULTS_SCHEMA.md
        results.rows("sula"), results.table("sula")    # per-prompt rows (table: pandas)

    Returns a Run: path, manifest (manifest.json), results (suite -> its results.json as a dict),
    notes (what could not be read, or was written under another schema version). The arrays are not
    loaded: geomprobe.load_extraction(path / "extraction") reads the extract suite's.
    Results written before the schema had a header (schema 1) are read as they are, with a note.
    Raises RunDirectoryError (one line) when `path` has no readable manifest.json."""
    path = Path(path)
    manifest_path = path / "manifest.json"
    if not manifest_path.exists():
        raise RunDirectoryError(f"{path} is not a geomprobe run directory (no manifest.json): pass the --out of a "
                                "`geomprobe run`")
    try:
        manifest = json.loads(manifest_path.read_text())
    except ValueError as error:
        raise RunDirectoryError(f"{manifest_path} is not valid JSON ({error})") from None
    run = Run(path=path, manifest=manifest)
    order = list(manifest.get("suites") or {})  # the order the suites ran in
    for results in sorted(path.glob("*/results.json"),
                          key=lambda f: (order.index(f.parent.name) if f.parent.name in order else len(order),
                                         f.parent.name)):
        suite = results.parent.name
        try:
            data = json.loads(results.read_text())
        except ValueError as error:
            run.notes.append(f"could not read {suite}/results.json: {error}")
            continue
        if not isinstance(data, dict):
            continue
        version = data.get("schema_version", 1)
        if version > SCHEMA_VERSION:
            run.notes.append(f"{suite}/results.json has schema {version}, newer than this geomprobe's "
                             f"{SCHEMA_VERSION}: upgrade geomprobe to read it fully")
        elif version < SCHEMA_VERSION:
            run.notes.append(f"{suite}/results.json has schema {version} (this geomprobe writes {SCHEMA_VERSION}): "
                             f"rerun the suite to rewrite it")
        run.results[suite] = data
    return run
