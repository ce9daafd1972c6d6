"""DEFINITIONS: for each headline quantity, geomprobe's definition, the papers' text, the released
code's, its file, the published figure and the functions here that compute it (METHODS.md section 11).
Data only, which a report formats; apart from the code so that the facts read as one table.
"""

from __future__ import annotations

_METHODS_11 = "METHODS.md sections 7 and 11; geomprobe.suites.sula.REFERENCE_PAPER_III['official_code_pythia_410m']"

DEFINITIONS: dict[str, dict] = {
    "value_pc1_fraction": {
        "geomprobe": "lambda_1 / sum(lambda) of the standardised last-layer final-token values v = W_V x + b_V "
                     "(per kv head, per-head split), zero-variance columns dropped (METHODS.md section 2)",
        "paper_text": "PCA of the standardised last-layer final-token value vectors (METHODS.md section 2)",
        "released_code": "standardised PCA(10) of the code's last-layer final-token 'values': for Pythia columns "
                         "2048-3071 of query_key_value read as (3, H, d), i.e. v of head 10 and q, k, v of heads 11-15; "
                         "model in bfloat16; other scripts use raw PCA or post-norm hidden_states[-1]",
        "released_file": "experiments/paper3_llm/sula_pipeline/analyze_icl_sula.py (values from hf_activations.py)",
        "reference_value": 0.264,
        "reference_source": "the released code on Pythia-410M SULA, 150 prompts (" + _METHODS_11 + "); PC2 0.113. "
                            "The released generator writes 250 prompts (k in 0, 1, 2, 4, 8; 50 each)",
        "functions": ("released_value_manifold", "pc_variance_fractions", "pc_coordinates"),
    },
    "rho_pc1_entropy_sula": {
        "geomprobe": "Spearman partial rho(PC1, H_bayes) given k (headline); raw Spearman labelled confounded; "
                     "PC1 oriented so that rho >= 0 (METHODS.md section 7)",
        "paper_text": "|rho(PC1, H_bayes)| 0.65-0.80 across models (paper III, as METHODS.md section 7 records)",
        "released_code": "Pearson r between the PC1 coordinate (scikit-learn's arbitrary sign) of the standardised "
                         "as-released values and H_bayes, pooled over k (run_sula_main.py: raw PCA, sign flipped to "
                         "r >= 0; sula_experiments.py: Spearman on post-norm hidden states)",
        "released_file": "experiments/paper3_llm/sula_pipeline/analyze_icl_sula.py",
        "reference_value": -0.77,
        "reference_source": "the released code on Pythia-410M SULA (" + _METHODS_11 + "); the sign is scikit-learn's; "
                            "analyze_icl_sula.py or sula_experiments.py, which one is not recorded",
        "functions": ("released_value_manifold", "pc_variance_fractions", "pc_coordinates"),
    },
    "key_orthogonality": {
        "geomprobe": "mean |cos| between the d columns of each W_K [D, d] (per kv head, raw weights), mean over "
                     "heads per layer, beside analytic/empirical Gaussian and untrained baselines (METHODS.md section 3)",
        "paper_text": "off-diagonal cosine of key vectors; trained models 0.034-0.18, random baselines stated as "
                      "0.02-0.04, about 0.11 (d = 64) and 0.40-0.45 at initialisation (METHODS.md section 3)",
        "released_code": "(a) mean |cos| of raw token embeddings of 100 ids drawn with torch.randint, unseeded, no W_K "
                         "(analyze_geometry.py); (b) mean |cos| between the H heads' final-token keys of the code's own "
                         "split, per prompt then averaged (analyze_icl_sula.py); (c) signed mean cosine of E W_K over "
                         "the whole vocabulary per head (paper1 qkv_analysis.py)",
        "released_file": "experiments/paper3_llm/analyze_geometry.py",
        "reference_value": 0.0297,
        "reference_source": "the released code's analyze_geometry.py on Pythia-410M (" + _METHODS_11 + "); "
                            "sqrt(2 / (pi * 1024)) = 0.0249 for Gaussian vectors in its D = 1024",
        "functions": ("embedding_key_orthogonality", "final_token_key_orthogonality", "vocab_token_key_cosine",
                      "wk_column_orthogonality"),
    },
    "participation_ratio": {
        "geomprobe": "(sum lambda)^2 / sum lambda^2 over the whole spectrum of the standardised values",
        "paper_text": "(sum lambda)^2 / sum lambda^2 (METHODS.md section 2)",
        "released_code": "the same formula over the top 10 eigenvalues of PCA(n_components=10) only (so at most 10), "
                         "+1e-12 in the denominator",
        "released_file": "experiments/paper3_llm/sula_pipeline/analyze_icl_sula.py",
        "reference_value": None,
        "reference_source": None,
        "functions": ("participation_ratio",),
    },
    "sula_mae": {
        "geomprobe": "mean |H_model - H_bayes| (bits), H_model over {L1, L2} renormalised, bootstrap CI, beside "
                     "k-only and constant baselines (METHODS.md section 7)",
        "paper_text": "MAE |H_model - H_bayes| in bits (METHODS.md section 7)",
        "released_code": "the same MAE per k and overall, with Pearson r(H_model, H_bayes); H_model with 1e-12 terms; "
                         "matches geomprobe to rounding on the same prompts",
        "released_file": "experiments/paper3_llm/sula_pipeline/analyze_icl_sula.py, compare_sula_interventions.py",
        "reference_value": 0.44,
        "reference_source": "paper III, Pythia-410M (Llama-3.2-1B 0.36, Phi-2 0.31)",
        "functions": ("sula_calibration", "sula_label_entropy_bits"),
    },
    "attention_entropy_per_layer": {
        "geomprobe": "mean over query heads of each head's final-token attention entropy (bits, padding and "
                     "out-of-window keys excluded), then over prompts (METHODS.md section 4)",
        "paper_text": "per-layer mean attention entropy at the final token; focusing = 1 - Hbar(L-1) / Hbar(0)",
        "released_code": "the same from eager output_attentions, final query row, renormalised with 1e-12 epsilons",
        "released_file": "experiments/paper3_llm/sula_pipeline/analyze_icl_sula.py",
        "reference_value": None,
        "reference_source": "paper III gives focusing, not per-layer entropies: Pythia-410M 82%",
        "functions": ("attention_entropy_by_layer",),
    },
    "intervention_lambda": {
        "geomprobe": "cut z' = z - lambda (z . u) u: lambda = 1 removes the axis, lambda = 0 is a no-op bit for bit",
        "paper_text": None,
        "released_code": "v' = v_perp + lambda_scale v_par: lambda_scale = 0 (the CLI default) removes, 1 keeps; "
                         "the default --layer-idx -1 matches no layer, so nothing is edited",
        "released_file": "experiments/paper3_llm/sula_pipeline/hf_activations.py, extract_geometry_sula.py",
        "reference_value": None,
        "reference_source": None,
        "functions": ("paper_cut", "released_edited_layers"),
    },
    "intervention_cut": {
        "geomprobe": "on standardised values z = (v - mean) / scale of the true value columns, mapped back; columns "
                     "that did not vary are left alone (METHODS.md section 8)",
        "paper_text": "remove the entropy axis from the value vectors at the chosen layers (METHODS.md section 8)",
        "released_code": "on raw, uncentred values in the model's dtype (bfloat16); for Pythia on the as-released "
                         "columns (v of head 10 and q, k, v of heads 11-15); the axis file (u_ent, sigma_pc1) is "
                         "written by no released script",
        "released_file": "experiments/paper3_llm/sula_pipeline/hf_activations.py",
        "reference_value": None,
        "reference_source": "paper III: axis-entropy correlation 0.27-0.32 falls to about 0 under the true cut",
        "functions": ("paper_cut", "paper_only", "paper_shift"),
    },
    "intervention_random_axes": {
        "geomprobe": "Gaussian over the kept columns, orthogonalised against u, seeded by (seed, layer, draw), "
                     "same standardisation and sigma_u, at least 19 draws",
        "paper_text": "random-axis controls change the correlation by about 0.01 (METHODS.md section 8)",
        "released_code": "one float32 Gaussian unit axis per layer from default_rng(seed + layer), not orthogonalised "
                         "against u; a shift reuses the true axis's sigma_pc1 when the file is readable, else 1",
        "released_file": "experiments/paper3_llm/sula_pipeline/hf_activations.py",
        "reference_value": None,
        "reference_source": None,
        "functions": ("paper_random_axes", "released_random_axis"),
    },
    "neox_values": {
        "geomprobe": "query_key_value output split per head (H, 3, d), index 2: the model's own v",
        "paper_text": "the value vectors of each head",
        "released_code": "the same output split (3, H, d), part 2: for H = 16, d = 64, head 10's v and q, k, v of "
                         "heads 11-15 (only 6 of 16 blocks are values); its keys are k5, v5, q6 ... q10, k10",
        "released_file": "experiments/paper3_llm/sula_pipeline/hf_activations.py",
        "reference_value": None,
        "reference_source": None,
        "functions": ("neox_split", "neox_released_blocks", "neox_released_origin"),
    },
    "llama_keys": {
        "geomprobe": "k_proj output split into the G kv heads",
        "paper_text": None,
        "released_code": "k_proj and v_proj outputs reshaped by the H query heads: Llama-3.2-1B gives 32 slices of "
                         "width 16, four per kv head",
        "released_file": "experiments/paper3_llm/sula_pipeline/hf_activations.py",
        "reference_value": None,
        "reference_source": None,
        "functions": ("llama_keys", "llama_keys_as_released", "llama_released_origin"),
    },
    "final_hidden_state": {
        "geomprobe": "readout `hidden` at the last layer (last_hidden_state, after the final norm); `resid` is before it",
        "paper_text": "the final hidden state (METHODS.md section 2, Ambiguity)",
        "released_code": "hidden_states[-1][0, -1] with output_hidden_states=True: after the final norm",
        "released_file": "experiments/paper3_llm/analyze_geometry.py, experiments/paper3_llm/sula_experiments.py",
        "reference_value": None,
        "reference_source": None,
        "functions": ("post_final_norm",),
    },
}
