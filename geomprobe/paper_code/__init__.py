"""What the papers' released code measures, as pure functions (METHODS.md section 11).

    q, k, v = neox_split(qkv_out, 16, 64, as_released=True)   # the code's Pythia "values" are v
    neox_released_blocks(16, "v")        # [(10, 'v'), (11, 'q'), (11, 'k'), (11, 'v'), ..., (15, 'v')]
    paper_cut(values, u, lambda_scale=0.0)                     # the code's cut: removes the axis
    DEFINITIONS["key_orthogonality"]["released_code"]          # one row of the side-by-side table

The code of Aggarwal, Dalal and Misra (github vishalmisra/bayesian-wind-tunnel, MIT licence) was
read to learn what it computes; nothing here is copied from it. File names below are relative to
its `experiments/` folder: `paper3_llm/analyze_geometry.py`, `paper3_llm/sula_experiments.py`,
`paper3_llm/sula_pipeline/{hf_activations, extract_geometry_sula, analyze_icl_sula, run_sula_main,
compare_sula_interventions, visualize_sula_controls, generate_sula_dataset}.py` and
`paper1_bijection/figures/qkv_analysis.py` (plus `src/utils/geometry.py` at the top level).

Each function states what the released code does, where, and how that differs from geomprobe's
default. They take numpy arrays (and, where the code works on activations, torch tensors) and
return numbers or arrays; only `post_final_norm` (and `final_norm_module`) and the readouts that
run one forward of their own (`final_token_outputs`, `final_token_keys`,
`released_final_token_values`, `released_final_token_keys`) touch a model. `DEFINITIONS` is
the data for a side-by-side table of geomprobe's definition, the papers' text, the released code
and the figure it produced.

The package has one module per part: layouts (which columns are values and keys; the final hidden
state), orthogonality, interventions, statistics, definitions (DEFINITIONS, data only) and
side_by_side (the suites' tables and the readouts that run a forward). Every name is importable
from geomprobe.paper_code.
"""

from __future__ import annotations

from .definitions import DEFINITIONS
from .interventions import paper_cut, paper_only, paper_random_axes, paper_shift, released_edited_layers, released_random_axis
from .layouts import (
    FINAL_NORM_NAMES,
    KINDS,
    RELEASED_REPO,
    final_norm_module,
    llama_keys,
    llama_keys_as_released,
    llama_released_origin,
    neox_released_blocks,
    neox_released_origin,
    neox_split,
    post_final_norm,
)
from .orthogonality import (
    embedding_key_orthogonality,
    final_token_key_orthogonality,
    mean_abs_offdiag_cosine,
    signed_mean_offdiag_cosine,
    vocab_token_key_cosine,
    wk_column_orthogonality,
)
from .side_by_side import (
    DEFINITION_CHOICES,
    GEOMETRY_FILE,
    SIDE_BY_SIDE_NOTE,
    final_token_keys,
    final_token_outputs,
    geometry_side_by_side,
    released_final_token_keys,
    released_final_token_values,
    released_keys_rows,
    released_values_rows,
    side_by_side_row,
    sula_side_by_side,
)
from .statistics import (
    MANIFOLD_SCRIPTS,
    attention_entropy_by_layer,
    correlation,
    participation_ratio,
    pc_coordinates,
    pc_eigenvalues,
    pc_variance_fractions,
    released_value_manifold,
    script_file,
    sula_calibration,
    sula_label_entropy_bits,
)

__all__ = ["DEFINITIONS", "DEFINITION_CHOICES", "FINAL_NORM_NAMES", "GEOMETRY_FILE", "KINDS", "MANIFOLD_SCRIPTS",
           "RELEASED_REPO", "SIDE_BY_SIDE_NOTE", "attention_entropy_by_layer", "correlation", "embedding_key_orthogonality",
           "final_norm_module", "final_token_key_orthogonality", "final_token_keys", "final_token_outputs",
           "geometry_side_by_side", "llama_keys", "llama_keys_as_released", "llama_released_origin", "mean_abs_offdiag_cosine",
           "neox_released_blocks", "neox_released_origin", "neox_split", "paper_cut", "paper_only", "paper_random_axes",
           "paper_shift", "participation_ratio", "pc_coordinates", "pc_eigenvalues", "pc_variance_fractions", "post_final_norm",
           "released_edited_layers", "released_final_token_keys", "released_final_token_values", "released_keys_rows",
           "released_random_axis", "released_value_manifold", "released_values_rows", "script_file", "side_by_side_row",
           "signed_mean_offdiag_cosine", "sula_calibration", "sula_label_entropy_bits", "sula_side_by_side",
           "vocab_token_key_cosine", "wk_column_orthogonality"]
