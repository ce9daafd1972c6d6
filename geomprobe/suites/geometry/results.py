"""The geometry suite's results: the layout of <run>/geometry/results.json (checked before it is written; RESULTS_SCHEMA.md
lists it)."""

from __future__ import annotations

from geomprobe.suites.schema import Header, PaperCodeTable, PromptsUsed, UntrainedNull

SCHEMA_VERSION = 3  # breaking changes of this layout; 3: with the header, untrained nulls and downstream ablation


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


NESTED = ()  # its nested types, listed in RESULTS_SCHEMA.md
