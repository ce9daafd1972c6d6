"""Key orthogonality under the released code's three definitions and geomprobe's (METHODS.md sections
3 and 11), on arrays only: a module of its own because which of these a figure means (0.0297 is the
first) is the question the side-by-side table answers.
"""

from __future__ import annotations

import numpy as np

from .layouts import _generator


def _cosines(vectors, norm_floor: float = 0.0, norm_add: float = 0.0) -> np.ndarray:
    """[..., n, dim] -> [..., n, n] cosine matrix, norms max(|x|, norm_floor) + norm_add."""
    vectors = np.asarray(vectors, dtype=np.float64)
    if vectors.ndim < 2 or vectors.shape[-2] < 2:
        raise ValueError(f"need at least 2 vectors as [..., n, dim], got shape {vectors.shape}")
    norms = np.maximum(np.linalg.norm(vectors, axis=-1, keepdims=True), norm_floor) + norm_add
    unit = vectors / norms
    return unit @ np.swapaxes(unit, -1, -2)


def _off_diagonal_mean(matrix: np.ndarray):
    n = matrix.shape[-1]
    result = (matrix.sum(axis=(-2, -1)) - np.trace(matrix, axis1=-2, axis2=-1)) / (n * (n - 1))
    return float(result) if np.ndim(result) == 0 else result


def mean_abs_offdiag_cosine(vectors, norm_floor: float = 1e-8, norm_add: float = 0.0):
    """Mean |cos| over the ordered pairs i != j of n vectors [..., n, dim] (the same as over the
    n (n - 1) / 2 unordered pairs) -> float, or [...] for a stack. Norms are max(|x|, norm_floor) +
    norm_add: the released `analyze_geometry.py` and `src/utils/geometry.py` floor at 1e-8,
    `analyze_icl_sula.py` adds 1e-12; for non-zero vectors the difference is rounding."""
    return _off_diagonal_mean(np.abs(_cosines(vectors, norm_floor, norm_add)))


def signed_mean_offdiag_cosine(vectors, norm_floor: float = 1e-12):
    """Mean signed cos over the pairs i != j of [..., n, dim] (positive and negative cosines cancel,
    so 0 does not mean orthogonal). Norms floored at 1e-12, as torch's F.normalize does. Computed
    without the n x n matrix (a whole vocabulary is n = 50,000): the sum over i != j of u_i . u_j
    is |sum u_i|^2 - sum |u_i|^2."""
    vectors = np.asarray(vectors, dtype=np.float64)
    if vectors.ndim < 2 or vectors.shape[-2] < 2:
        raise ValueError(f"need at least 2 vectors as [..., n, dim], got shape {vectors.shape}")
    unit = vectors / np.maximum(np.linalg.norm(vectors, axis=-1, keepdims=True), norm_floor)
    n = unit.shape[-2]
    total = np.square(unit.sum(axis=-2)).sum(axis=-1) - np.square(unit).sum(axis=(-2, -1))
    result = total / (n * (n - 1))
    return float(result) if np.ndim(result) == 0 else result


def embedding_key_orthogonality(embeddings, generator, n_tokens: int = 100, vocab_size: int | None = None,
                                n_layers: int | None = None):
    """Definition (a), the one behind the 0.0297 figure: mean |cos| between the raw input
    embeddings [vocab, D] of n_tokens random token ids. No W_K, no norm, no position: the code's
    own comment calls the embeddings a proxy for keys (`paper3_llm/analyze_geometry.py`,
    `extract_key_vectors` and `analyze_key_orthogonality`).

    The code draws the ids with `torch.randint(0, tokenizer.vocab_size, (100,))` with no seed, so
    with replacement (a repeated id adds a pair of cosine 1) and from the tokenizer's vocabulary
    (Pythia: 50,254 of the 50,304 embedding rows); it draws afresh for every layer, so its
    "per-layer" scores (and their mean, and "layer 0") differ only by the draw. Here the ids come
    from `generator` (a numpy Generator or an int seed): `n_layers=None` returns one float, an int
    returns that many independent draws [n_layers], like the code's layer_scores.

    For i.i.d. Gaussian embeddings the expectation is E|cos| in R^D, about sqrt(2 / (pi D)) (0.0249
    for D = 1024). geomprobe's key orthogonality instead measures the columns of W_K
    (`wk_column_orthogonality`), and its `--token-keys` mode the projected keys E W_K."""
    embeddings = np.asarray(embeddings)
    rng = _generator(generator)
    high = len(embeddings) if vocab_size is None else int(vocab_size)
    if not 0 < high <= len(embeddings):
        raise ValueError(f"vocab_size {vocab_size} must be in 1..{len(embeddings)} (the embedding rows)")

    def one_draw() -> float:
        return mean_abs_offdiag_cosine(embeddings[rng.integers(0, high, size=n_tokens)])

    if n_layers is None:
        return one_draw()
    return np.array([one_draw() for _ in range(n_layers)])


def final_token_key_orthogonality(keys, norm_add: float = 1e-12) -> np.ndarray:
    """Definition (b): keys [n_prompts, n_layers, n_heads, d] -> [n_layers]. For each prompt and
    layer, the mean |cos| between the final-token keys of the n_heads "heads", then the mean over
    prompts (`sula_pipeline/analyze_icl_sula.py`, `compute_key_orthogonality`; norms + 1e-12).

    These are activations, one vector per head, not weights. What the code stores as keys is its
    own split (`hf_activations.py`): for Pythia `neox_split(..., as_released=True)[1]` (blocks k5,
    v5, q6, k6, v6, ..., q10, k10: `neox_released_blocks(16, "k")`), for Llama the H query-head
    slices of `llama_keys_as_released`. Its Gaussian baseline is sqrt(2 / (pi d)) at that width.
    geomprobe measures the d columns of each W_K instead (`wk_column_orthogonality`)."""
    keys = np.asarray(keys, dtype=np.float64)
    if keys.ndim != 4:
        raise ValueError(f"keys must be [n_prompts, n_layers, n_heads, d_head], got shape {keys.shape}")
    return mean_abs_offdiag_cosine(keys, norm_floor=0.0, norm_add=norm_add).mean(axis=0)


def vocab_token_key_cosine(embeddings, w_k) -> np.ndarray:
    """Definition (c): embeddings [V, D] (the whole vocabulary), w_k [n_heads, D, d] (geomprobe's
    layout, columns in R^D) -> [n_heads]: per head, the *signed* mean off-diagonal cosine among the
    projected keys E W_K of all V tokens; the code then averages heads per layer
    (`paper1_bijection/figures/qkv_analysis.py`, `cmd_orthogonality`, on the wind-tunnel TinyGPT:
    no bias, no norm before W_K). Signed cosines cancel, so this is a mean direction, not an
    orthogonality; geomprobe's `--token-keys` mode takes |cos| over a seeded token sample."""
    embeddings = np.asarray(embeddings)  # float32 stays float32: a 128k x 2048 vocabulary is 1 GiB already
    if embeddings.dtype not in (np.float32, np.float64):
        embeddings = embeddings.astype(np.float64)
    w_k = np.asarray(w_k, dtype=embeddings.dtype)
    if w_k.ndim != 3 or w_k.shape[1] != embeddings.shape[1]:
        raise ValueError(f"w_k must be [n_heads, D={embeddings.shape[1]}, d_head], got shape {w_k.shape}")
    return np.array([signed_mean_offdiag_cosine(embeddings @ head) for head in w_k])  # one head at a time


def wk_column_orthogonality(w_k) -> float:
    """geomprobe's definition, for the table: w_k [n_heads, D, d] -> the mean over heads of the mean
    |cos| between the d columns (vectors in R^D) of each head's W_K
    (`geomprobe.analysis.key_orthogonality.orth_statistic`, METHODS.md section 3). None of the
    released scripts for LLMs computes it."""
    from geomprobe.analysis.key_orthogonality import head_orth

    return float(np.mean(head_orth(np.asarray(w_k, dtype=np.float64))[0]))  # all-zero columns left out
