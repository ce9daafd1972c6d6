"""The suites' side-by-side tables (results["paper_code"] of sula and geometry): each headline number
under geomprobe's definition and the released code's, and the readouts that run one forward of their
own over the prompts (final-token outputs, keys, the as-released values) for --definitions paper-code
and paper-code-as-released. The only part of geomprobe.paper_code that builds results.
"""

from __future__ import annotations

import numpy as np

from geomprobe.families import released_fused_qkv

from .definitions import DEFINITIONS
from .layouts import llama_keys_as_released, neox_released_blocks, neox_split
from .orthogonality import embedding_key_orthogonality, final_token_key_orthogonality, vocab_token_key_cosine
from .statistics import participation_ratio, pc_eigenvalues, released_value_manifold, script_file, sula_calibration

DEFINITION_CHOICES = ("geomprobe", "paper-code", "paper-code-as-released")
GEOMETRY_FILE = script_file("analyze_geometry")
SIDE_BY_SIDE_NOTE = ("each row: geomprobe's number as the suite reports it, the same quantity as the papers' released "
                     "code defines it (computed by geomprobe on the same prompts and arrays; the NeoX and Llama split "
                     "errors are not reproduced: the values are the model's own), and the published figure where one "
                     "exists; METHODS.md section 11 says what each definition does and why geomprobe's differs")


def _number(entry):
    """A plain float from a results entry (an Estimate dict with "value", a number, or None)."""
    if isinstance(entry, dict):
        entry = entry.get("value")
    return None if entry is None else float(entry)


def side_by_side_row(quantity: str, label: str, geomprobe, paper_code, how_geomprobe: str, how_paper_code: str,
                     published=None, published_source: str | None = None, same_definition: bool = False,
                     released_file: str | None = None) -> dict:
    """One row of the side-by-side table (results["paper_code"]["rows"]); released_file: the
    released script the paper-code number follows (default: DEFINITIONS[quantity]'s)."""
    return {"quantity": quantity, "label": label, "geomprobe": _number(geomprobe), "paper_code": _number(paper_code),
            "geomprobe_how": how_geomprobe, "paper_code_how": how_paper_code, "published": published,
            "published_source": published_source, "same_definition": bool(same_definition),
            "released_file": released_file or DEFINITIONS.get(quantity, {}).get("released_file")}


def sula_side_by_side(values_last, hidden_last, H_bayes, H_model, k, main_metrics: dict, axis_summary: dict) -> dict:
    """results["paper_code"] of the sula suite. values_last [n, p]: the main prompts' last-layer
    final-token values (the model's own split); hidden_last [n, D]: hidden_states[-1] (after the
    final norm); H_bayes, H_model, k [n]; main_metrics: results["conditions"]["main"];
    axis_summary: results["axis"]."""
    values_last = np.asarray(values_last, dtype=np.float64).reshape(len(values_last), -1)
    hidden_last = np.asarray(hidden_last, dtype=np.float64).reshape(len(hidden_last), -1)
    scripts = {"analyze_icl_sula": released_value_manifold(values_last, H_bayes, "analyze_icl_sula"),
               "run_sula_main": released_value_manifold(values_last, H_bayes, "run_sula_main"),
               "sula_experiments": released_value_manifold(hidden_last, H_bayes, "sula_experiments")}
    calibration = sula_calibration(H_model, H_bayes, k)
    icl, hidden = scripts["analyze_icl_sula"], scripts["sula_experiments"]
    eig = pc_eigenvalues(values_last, standardise=True)
    published = DEFINITIONS["value_pc1_fraction"]["reference_source"]
    rows = [
        side_by_side_row("value_pc1_fraction", "value PC1 fraction, last layer", axis_summary.get("pc1_explained"),
                         icl["pc1"], "standardised values, zero-variance columns dropped, exact SVD",
                         "analyze_icl_sula.py: standardised values, PCA(10)", 0.264, published),
        side_by_side_row("value_pc1_fraction", "PC1 fraction of the final hidden state", None, hidden["pc1"],
                         "geomprobe reads values (before the final norm: --readout resid; after it: --readout hidden)",
                         "sula_experiments.py: standardised hidden_states[-1], after the final norm",
                         released_file=script_file("sula_experiments")),
        side_by_side_row("rho_pc1_entropy_sula", "rho(PC1, H_bayes), values", main_metrics.get("rho_pc1_H_bayes_given_k"),
                         icl["rho_pc1_entropy"], "Spearman partial rho given k, PC1 oriented rho(PC1, H_model) >= 0",
                         "analyze_icl_sula.py: Pearson over all k, scikit-learn's sign", -0.77,
                         DEFINITIONS["rho_pc1_entropy_sula"]["reference_source"]),
        side_by_side_row("rho_pc1_entropy_sula", "rho(PC1, H_bayes) over all k, values",
                         main_metrics.get("rho_pc1_H_bayes"), scripts["run_sula_main"]["rho_pc1_entropy"],
                         "Spearman over all k (confounded with k), PC1 oriented by H_model",
                         "run_sula_main.py: Pearson on raw-PCA PC1, sign flipped to r >= 0",
                         released_file=script_file("run_sula_main")),
        side_by_side_row("rho_pc1_entropy_sula", "rho(PC1, H_bayes), final hidden state", None,
                         hidden["rho_pc1_entropy"], "not a geomprobe headline",
                         "sula_experiments.py: Spearman, standardised hidden_states[-1], scikit-learn's sign",
                         released_file=script_file("sula_experiments")),
        side_by_side_row("participation_ratio", "participation ratio, last-layer values",
                         participation_ratio(eig), icl["participation_ratio"], "over the whole spectrum",
                         "analyze_icl_sula.py: over the top 10 eigenvalues only (at most 10)"),
        side_by_side_row("sula_mae", "SULA MAE (bits)", main_metrics.get("mae_bits"), calibration["all"]["mae_bits"],
                         "mean |H_model - H_bayes|, labels renormalised", "the same, 1e-12 terms", 0.44,
                         DEFINITIONS["sula_mae"]["reference_source"], same_definition=True),
        side_by_side_row("sula_mae", "Pearson(H_model, H_bayes)", main_metrics.get("pearson_H_model_H_bayes"),
                         calibration["all"]["pearson"], "Pearson over all prompts", "the same",
                         same_definition=True),
    ]
    return {"definitions": "paper-code", "note": SIDE_BY_SIDE_NOTE, "rows": rows, "scripts": scripts,
            "calibration_per_k": calibration}


def geometry_side_by_side(hidden_last, next_entropy_bits, embeddings, manifold: dict, keys: dict, focusing: dict,
                          seed: int, vocab_size: int | None = None, token_keys=None, last_w_k=None) -> dict:
    """results["paper_code"] of the geometry suite. hidden_last [n, D]: the sample's
    hidden_states[-1] (after the final norm); next_entropy_bits [n]; embeddings [vocab, D]: the
    input embedding matrix; manifold, keys, focusing: the suite's own results entries; seed: the
    run's seed (the released code draws its token ids unseeded); token_keys [n, L, heads, d]: the
    final-token keys (final_token_keys) for definition (b); last_w_k [heads, D, d]: the last
    layer's W_K for definition (c), the signed cosine over the whole vocabulary."""
    hidden_last = np.asarray(hidden_last, dtype=np.float64).reshape(len(hidden_last), -1)
    script = released_value_manifold(hidden_last, next_entropy_bits, "analyze_geometry")
    draws = embedding_key_orthogonality(embeddings, seed, vocab_size=vocab_size, n_layers=10)
    rows = [
        side_by_side_row("value_pc1_fraction", "PC1 fraction, last layer", manifold.get("pc1"), script["pc1"],
                         f"standardised {manifold.get('readout', 'values')} (METHODS.md section 2)",
                         "analyze_geometry.py: standardised hidden_states[-1], after the final norm",
                         released_file=GEOMETRY_FILE),
        side_by_side_row("rho_pc1_entropy", "rho(PC1, next-token entropy), last layer", manifold.get("rho_pc1_entropy"),
                         script["rho_pc1_entropy"], "Spearman, PC1 oriented rho >= 0",
                         "analyze_geometry.py: Spearman, scikit-learn's sign", released_file=GEOMETRY_FILE),
        side_by_side_row("participation_ratio", "participation ratio, last layer", manifold.get("pr"),
                         script["participation_ratio"], "over the whole spectrum",
                         "analyze_geometry.py: over the whole spectrum, post-norm hidden state", released_file=GEOMETRY_FILE),
        side_by_side_row("key_orthogonality", "key orthogonality (mean |cos|)", keys.get("mean"),
                         float(np.mean(draws)), "columns of W_K per kv head, mean over heads and layers",
                         "analyze_geometry.py: raw token embeddings of 100 random ids, no W_K (mean of 10 seeded "
                         "draws)", 0.0297, DEFINITIONS["key_orthogonality"]["reference_source"],
                         released_file=GEOMETRY_FILE),
        side_by_side_row("attention_focusing", "attention focusing 1 - Hbar(L-1) / Hbar(0)", focusing.get("focusing"),
                         focusing.get("focusing"), "final-token attention entropy, mean over heads and prompts",
                         "the same per-layer entropies (analyze_icl_sula.py), so the same focusing",
                         same_definition=True, released_file="experiments/paper3_llm/sula_pipeline/analyze_icl_sula.py"),
    ]
    if token_keys is not None:
        one_head = np.shape(token_keys)[2] < 2  # one kv head (Gemma 3 270M): no pair of keys to take a cosine of
        per_layer = None if one_head else final_token_key_orthogonality(token_keys)
        rows.append(side_by_side_row(
            "key_orthogonality", "key orthogonality, final-token keys of the heads", None,
            None if one_head else float(np.mean(per_layer)),
            "not a geomprobe number (geomprobe measures W_K, not one prompt's keys)",
            "analyze_icl_sula.py: mean |cos| between the heads' final-token keys, per prompt, mean over prompts and "
            "layers (the model's own split here)" + ("; undefined here: the model has one kv head, so no pair"
                                                     if one_head else ""),
            released_file="experiments/paper3_llm/sula_pipeline/analyze_icl_sula.py"))
    if last_w_k is not None:
        rows.append(side_by_side_row(
            "key_orthogonality", "signed mean cosine of E W_K over the vocabulary, last layer", None,
            float(np.mean(vocab_token_key_cosine(embeddings, last_w_k))),
            "not a geomprobe number (signed cosines cancel: a mean direction, not an orthogonality)",
            "qkv_analysis.py (paper I): signed mean cosine among the projected keys of every token, mean over heads",
            released_file="experiments/paper1_bijection/figures/qkv_analysis.py"))
    return {"definitions": "paper-code", "note": SIDE_BY_SIDE_NOTE, "rows": rows, "scripts": {"analyze_geometry": script},
            "embedding_key_draws": [float(x) for x in draws]}


def final_token_outputs(loaded, prompts, modules, max_tokens: int | None = None, batch_size: int = 8
                        ) -> list[np.ndarray]:
    """One forward over the prompts (geomprobe's tokenisation and right padding) with a forward hook
    on each of `modules`: for each, [n_prompts, out] float64, its output at each prompt's final
    token (a module called more than once per forward keeps its first call)."""
    import torch

    from geomprobe.extraction.tokens import _pad_id, pad_batch, tokenize
    from geomprobe.hooks import Hook, hooked

    adapter = loaded.adapter
    encoded = tokenize(loaded.tokenizer, prompts, max_tokens)
    pad_id, device = _pad_id(loaded.tokenizer), loaded.model.get_input_embeddings().weight.device
    rows: list[list[np.ndarray]] = [[] for _ in modules]
    for start in range(0, len(encoded), batch_size):
        input_ids, attention_mask, final_index = pad_batch(encoded[start:start + batch_size], pad_id)
        seen: dict[int, np.ndarray] = {}

        def keep(index):
            def hook(module, args, output):
                if index not in seen:
                    picked = output[torch.arange(len(final_index)), final_index.to(output.device)]
                    seen[index] = picked.float().cpu().numpy()
            return hook

        with hooked([Hook(module, keep(index)) for index, module in enumerate(modules)]), torch.no_grad():
            adapter.backbone()(input_ids=input_ids.to(device), attention_mask=attention_mask.to(device),
                               use_cache=False)
        for index in range(len(modules)):
            rows[index].append(seen[index])
    return [np.concatenate(parts).astype(np.float64) for parts in rows]


def final_token_keys(loaded, prompts, max_tokens: int | None = None, batch_size: int = 8) -> np.ndarray:
    """[n_prompts, n_layers, n_kv_heads, d_head] each layer's keys at each prompt's final token
    (the key projection's output, before the rotary embedding, as the released hooks read it), with
    the model's own split: definition (b)'s input. One extra forward over the prompts."""
    adapter, shape = loaded.adapter, loaded.adapter.shape
    outputs = final_token_outputs(loaded, prompts, [adapter.key_module(layer) for layer in range(shape.n_layers)],
                                  max_tokens, batch_size)
    layers = [adapter.split_keys(rows) for rows in outputs]
    return np.stack(layers, axis=1)


def released_final_token_values(loaded, prompts, layer: int, max_tokens: int | None = None,
                                batch_size: int = 8) -> tuple[np.ndarray, str]:
    """([n_prompts, p] the released code's "values" at `layer` and each prompt's final token, what
    they are): one extra forward over the prompts with a hook on the value projection.

    GPT-NeoX: columns [2 H d, 3 H d) of the fused query_key_value output (neox_split as released:
    for Pythia-410M head 10's v, then q, k, v of heads 11-15; before the rotary embedding, as the
    released hook reads them). Other families: the v_proj output, which the released reshape by
    query heads only regroups, so that flattened it equals the model's own values."""
    from geomprobe.errors import ConfigError

    adapter, shape = loaded.adapter, loaded.adapter.shape
    attention = adapter.attention(layer)
    if released_fused_qkv(loaded.model.config.model_type):
        what = (f"query_key_value columns {2 * shape.n_heads * shape.d_head}-{3 * shape.n_heads * shape.d_head - 1} "
                f"read as (3, H, d): {', '.join(f'{kind}{head}' for head, kind in neox_released_blocks(shape.n_heads))}")
    elif hasattr(attention, "v_proj"):
        what = "v_proj output (the released reshape by query heads regroups the same numbers)"
    else:
        raise ConfigError(f"--definitions paper-code-as-released knows the released layouts of GPT-NeoX and "
                          f"Llama-like attention, not {type(attention).__name__}")
    [matrix] = final_token_outputs(loaded, prompts, [adapter.value_module(layer)], max_tokens, batch_size)
    if released_fused_qkv(loaded.model.config.model_type):
        matrix = neox_split(matrix, shape.n_heads, shape.d_head, as_released=True)[2].reshape(len(matrix), -1)
    return matrix, what


def released_values_rows(released_values, H_bayes, what: str) -> list[dict]:
    """The side-by-side rows of the as-released "values" (analyze_icl_sula.py on them): PC1
    fraction, rho(PC1, H_bayes) and the participation ratio over the top 10 eigenvalues."""
    icl = released_value_manifold(released_values, H_bayes, "analyze_icl_sula")
    how = f"analyze_icl_sula.py on the values as released ({what})"
    return [side_by_side_row("value_pc1_fraction", "value PC1 fraction, values as released", None, icl["pc1"],
                             "not a geomprobe number: the released split mixes queries and keys into the values", how,
                             0.264, DEFINITIONS["value_pc1_fraction"]["reference_source"]),
            side_by_side_row("rho_pc1_entropy_sula", "rho(PC1, H_bayes), values as released", None,
                             icl["rho_pc1_entropy"], "not a geomprobe number", how, -0.77,
                             DEFINITIONS["rho_pc1_entropy_sula"]["reference_source"]),
            side_by_side_row("participation_ratio", "participation ratio, values as released", None,
                             icl["participation_ratio"], "not a geomprobe number",
                             how + "; over the top 10 eigenvalues only (at most 10)")]


def released_final_token_keys(loaded, prompts, max_tokens: int | None = None,
                              batch_size: int = 8) -> tuple[np.ndarray, str]:
    """([n_prompts, n_layers, H, w] each layer's final-token "keys" as the released code splits
    them, what they are): definition (b)'s input as released (`hf_activations.py`), from one
    forward with a hook on every layer's key projection (before the rotary embedding).

    GPT-NeoX: columns [H d, 2 H d) of query_key_value read as (3, H, d), w = d (for Pythia-410M the
    blocks k5, v5, q6, k6, v6, ..., q10, k10: a third of them keys). Llama-like (k_proj): the output
    reshaped by the H query heads (`llama_keys_as_released`), w = G d / H: under grouped-query
    attention each "head" is a slice of a kv head. geomprobe's own split is `final_token_keys`."""
    from geomprobe.errors import ConfigError

    adapter, shape = loaded.adapter, loaded.adapter.shape
    attention = adapter.attention(shape.n_layers - 1)
    if released_fused_qkv(loaded.model.config.model_type):
        what = (f"query_key_value columns {shape.n_heads * shape.d_head}-{2 * shape.n_heads * shape.d_head - 1} "
                f"read as (3, H, d): {', '.join(f'{kind}{head}' for head, kind in neox_released_blocks(shape.n_heads, 'k'))}")
    elif hasattr(attention, "k_proj"):
        width = shape.n_kv_heads * shape.d_head
        if width % shape.n_heads:
            raise ConfigError(f"the released code reshapes k_proj's {width} columns by the {shape.n_heads} query heads, "
                              f"which does not divide them: --definitions paper-code-as-released cannot run here")
        what = (f"k_proj output reshaped by the {shape.n_heads} query heads: slices of width {width // shape.n_heads}"
                + (f", {shape.n_heads // shape.n_kv_heads} per kv head" if shape.n_kv_heads < shape.n_heads
                   else " (the model's own heads: no grouped-query attention)"))
    else:
        raise ConfigError(f"--definitions paper-code-as-released knows the released layouts of GPT-NeoX and "
                          f"Llama-like attention, not {type(attention).__name__}")
    outputs = final_token_outputs(loaded, prompts, [adapter.key_module(layer) for layer in range(shape.n_layers)],
                                  max_tokens, batch_size)
    if released_fused_qkv(loaded.model.config.model_type):
        layers = [neox_split(rows, shape.n_heads, shape.d_head, as_released=True)[1] for rows in outputs]
    else:
        layers = [llama_keys_as_released(rows, shape.n_heads, shape.n_kv_heads, shape.d_head) for rows in outputs]
    return np.stack(layers, axis=1), what


def released_keys_rows(released_keys, what: str) -> list[dict]:
    """The side-by-side row of the as-released final-token keys (definition (b) on them)."""
    per_layer = final_token_key_orthogonality(released_keys)
    return [side_by_side_row(
        "key_orthogonality", "key orthogonality, final-token keys as released", None, float(np.mean(per_layer)),
        "not a geomprobe number: the released split puts values and queries among GPT-NeoX's keys and cuts "
        "Llama's kv heads into query-head slices",
        f"analyze_icl_sula.py on the keys as released ({what}): mean |cos| between the heads' final-token keys, "
        f"per prompt, mean over prompts and layers", released_file=script_file("analyze_icl_sula"))]
