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
"""

from __future__ import annotations

import numpy as np

RELEASED_REPO = "vishalmisra/bayesian-wind-tunnel"
KINDS = ("q", "k", "v")


def _is_torch(x) -> bool:
    return type(x).__module__.startswith("torch")


def _like(array, reference):
    """`array` as the same kind (numpy or torch, dtype, device) as `reference`."""
    if _is_torch(reference):
        import torch

        return torch.as_tensor(np.asarray(array) if not _is_torch(array) else array,
                               dtype=reference.dtype, device=reference.device)
    dtype = reference.dtype if np.issubdtype(reference.dtype, np.floating) else np.float64
    return np.asarray(array, dtype=dtype)


def _generator(generator) -> np.random.Generator:
    if isinstance(generator, np.random.Generator):
        return generator
    if generator is None:
        raise ValueError("pass a numpy Generator or an int seed: the released code draws unseeded, this module never does")
    return np.random.default_rng(generator)


# ----------------------------------------------------------------------------------------------
# Layouts: which columns the code calls values and keys


def neox_split(qkv, n_heads: int, d_head: int, as_released: bool = False):
    """GPT-NeoX fused `query_key_value` output [..., 3 H d] -> (q, k, v), each [..., H, d] (views).

    The layout (what transformers' GPTNeoXAttention reads, and geomprobe's GPT-NeoX adapter) is per
    head, (H, 3, d): head h owns columns [3 d h, 3 d (h + 1)) holding its q, k and v in that order.
    The released code (`sula_pipeline/hf_activations.py`, `register_hooks` -> `qkv_hook`) reshapes
    the same output as (3, H, d) and takes index 1 as keys and 2 as values; `as_released=True`
    does that. Its "values" are then columns [2 H d, 3 H d), whose true origin
    `neox_released_blocks` gives; its interventions write back into those same columns. Works on
    numpy arrays and torch tensors (q and k are before the rotary embedding)."""
    width = qkv.shape[-1]
    if width != 3 * n_heads * d_head:
        raise ValueError(f"query_key_value output has {width} columns, expected 3 * {n_heads} * {d_head}")
    lead = tuple(qkv.shape[:-1])
    if as_released:
        parts = qkv.reshape(lead + (3, n_heads, d_head))
        return parts[..., 0, :, :], parts[..., 1, :, :], parts[..., 2, :, :]
    per_head = qkv.reshape(lead + (n_heads, 3, d_head))
    return per_head[..., 0, :], per_head[..., 1, :], per_head[..., 2, :]


def neox_released_origin(n_heads: int, d_head: int, part: str = "v") -> list[tuple[int, str, int]]:
    """For each of the H d columns of the released code's `part` ("q", "k" or "v", its reading of
    the fused output as (3, H, d); see `neox_split`), the (head, "q"/"k"/"v", index) it really is.

    Column c of part j is fused column j H d + c, which belongs to head (j H d + c) // 3d, kind
    ((j H d + c) mod 3d) // d, index c mod d. Pythia-410M (H = 16, d = 64): the "values" start at
    fused column 2048 = 10 * 192 + 128, the first column of head 10's v. So they are head 10's v in
    full (columns 0-63), then q, k and v of heads 11-15: 6 of the 16 "value heads" are values
    (of heads 10-15), 5 are queries and 5 are keys, and the values of heads 0-9 are not read."""
    j = KINDS.index(part)
    fused = j * n_heads * d_head + np.arange(n_heads * d_head)
    return [(int(c // (3 * d_head)), KINDS[int(c % (3 * d_head)) // d_head], int(c % d_head)) for c in fused]


def neox_released_blocks(n_heads: int, part: str = "v") -> list[tuple[int, str]]:
    """The released code's `part` as H blocks of d columns (its "heads"): the (true head, kind) of
    each. Every block is one whole q, k or v of one head, since j H d is a multiple of d.
    H = 16: "v" -> (10, v), (11, q), (11, k), (11, v), ..., (15, v); "k" -> (5, k), (5, v), (6, q), ...,
    (10, q), (10, k); "q" -> (0, q), (0, k), (0, v), ..., (4, v), (5, q)."""
    j = KINDS.index(part)
    return [((j * n_heads + slot) // 3, KINDS[(j * n_heads + slot) % 3]) for slot in range(n_heads)]


def llama_keys(k, n_kv_heads: int, d_head: int):
    """Llama-style `k_proj` (or `v_proj`) output [..., G d] -> [..., G, d]: the G kv heads, as
    transformers and geomprobe split it."""
    if k.shape[-1] != n_kv_heads * d_head:
        raise ValueError(f"k_proj output has {k.shape[-1]} columns, expected {n_kv_heads} * {d_head}")
    return k.reshape(tuple(k.shape[:-1]) + (n_kv_heads, d_head))


def llama_keys_as_released(k, n_heads: int, n_kv_heads: int, d_head: int):
    """Llama-style `k_proj` output [..., G d] -> [..., H, G d / H], as the released code reshapes it
    (`sula_pipeline/hf_activations.py`, `flatten_attn`): by the number of *query* heads H. It does
    the same to `v_proj`. Under GQA (G < H) each of its "heads" is a 1 / (H / G) slice of one kv
    head (`llama_released_origin`): Llama-3.2-1B (H = 32, G = 8, d = 64) gives 32 "heads" of width
    16, four per kv head. Flattening undoes it, so PCA of flattened values is unaffected; per-head
    statistics (its final-token key orthogonality, and that script's Gaussian baseline at the
    width 16) are not. Like the released code, raises where G d is not a multiple of H."""
    width = k.shape[-1]
    if width != n_kv_heads * d_head:
        raise ValueError(f"k_proj output has {width} columns, expected {n_kv_heads} * {d_head}")
    if width % n_heads:
        raise ValueError(f"the released reshape needs {width} columns divisible by n_heads={n_heads}")
    return k.reshape(tuple(k.shape[:-1]) + (n_heads, width // n_heads))


def llama_released_origin(n_heads: int, n_kv_heads: int, d_head: int) -> list[tuple[int, int, int]]:
    """For each of the released code's H Llama "heads" (`llama_keys_as_released`), the
    (kv head, first index, end index) of the slice of the true kv head it holds."""
    width = n_kv_heads * d_head // n_heads
    return [((slot * width) // d_head, (slot * width) % d_head, (slot * width) % d_head + width)
            for slot in range(n_heads)]


# ----------------------------------------------------------------------------------------------
# The "final hidden state"


FINAL_NORM_NAMES = ("final_layer_norm", "norm", "final_layernorm", "ln_f")


def final_norm_module(adapter_or_model):
    """The final normalisation of a geomprobe Adapter's backbone or a transformers model (GPT-NeoX
    `final_layer_norm`, Llama/Mistral/Qwen2 `norm`, Phi `final_layernorm`), or None (BERT)."""
    backbone = adapter_or_model.backbone() if hasattr(adapter_or_model, "backbone") else adapter_or_model.base_model
    for name in FINAL_NORM_NAMES:
        module = getattr(backbone, name, None)
        if module is not None:
            return module
    return None


def post_final_norm(adapter_or_model, resid):
    """The model's final norm applied to a residual-stream readout [..., d_model] (numpy or torch;
    returned as the same kind, numpy as float32).

    The released code's "final hidden state" is transformers' `hidden_states[-1]` at the last
    token (`paper3_llm/analyze_geometry.py`, `analyze_value_manifold`; `paper3_llm/sula_experiments.py`,
    `extract_sula_geometry`): the last block's output *after* the final norm. geomprobe's `resid`
    readout is the block output before it. geomprobe already has the post-norm readout: `hidden`
    at the last layer is the backbone's last_hidden_state (`geomprobe.backends.hf.hidden_states_at`),
    so a new run should use `--readout hidden`; this function turns a stored last-layer `resid` into
    it. Applied to a lower layer's resid it gives a logit-lens-like readout, which the released
    code never uses. A model without a final norm (BERT) returns `resid` unchanged."""
    import torch

    norm = final_norm_module(adapter_or_model)
    if norm is None:
        return resid
    weight = next(norm.parameters(), None)
    tensor = resid if _is_torch(resid) else torch.as_tensor(np.asarray(resid))
    with torch.no_grad():
        out = norm(tensor.to(dtype=weight.dtype, device=weight.device) if weight is not None else tensor)
    if _is_torch(resid):
        return out.to(resid.dtype)
    return out.float().cpu().numpy()


# ----------------------------------------------------------------------------------------------
# Key orthogonality: three released definitions and geomprobe's


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


# ----------------------------------------------------------------------------------------------
# Interventions


def _unit_axis(u, values):
    """u normalised in float64 (the released code normalises in float32), then cast like `values`."""
    u = np.asarray(u.detach().cpu().double() if _is_torch(u) else u, dtype=np.float64)
    norm = float(np.linalg.norm(u))
    if not np.isfinite(norm) or norm == 0:
        raise ValueError("the axis is zero or not finite")
    return _like(u / norm, values)


def _coordinate(values, u):
    return (values @ u)[..., None]


def paper_cut(values, u, lambda_scale: float):
    """The released `axis_cut`: values [..., p] (raw) -> v - (1 - lambda_scale) (v . u) u, with u
    normalised (`sula_pipeline/hf_activations.py`, `InterventionRuntime.apply_value`: v_perp +
    lambda_scale v_par). lambda_scale = 0 (the command-line default of `extract_geometry_sula.py`)
    removes the axis component, lambda_scale = 1 keeps it.

    Differences from geomprobe's `cut` (`geomprobe.interventions.apply_op`): geomprobe's lambda
    counts the other way (lambda = 1 removes, lambda = 0 is a no-op bit for bit), and works on
    standardised coordinates z = (v - mean) / scale mapped back, while this projects the raw,
    uncentred v, so the mean's own component along u is removed too. The code computes in the
    model's dtype (bfloat16 in `hf_activations.py`), where even lambda_scale = 1 rounds v; this
    function computes in the dtype it is given. For Pythia the p columns are the code's values
    (`neox_split(..., as_released=True)`), not the model's."""
    u = _unit_axis(u, values)
    parallel = _coordinate(values, u) * u
    return (values - parallel) + lambda_scale * parallel


def paper_only(values, u):
    """The released `axis_only`: values [..., p] -> (v . u) u on raw values (lambda_scale ignored)."""
    u = _unit_axis(u, values)
    return _coordinate(values, u) * u


def paper_shift(values, u, delta_sigma: float, sigma_pc1: float = 1.0):
    """The released `axis_shift`: v + delta_sigma * sigma_pc1 * u on raw values (the code adds the shift
    to the coordinate and rebuilds v, the same map up to rounding). sigma_pc1 is read from
    the axis file (`entropy_axis_L{layer}_model.npz`, keys u_ent and sigma_pc1; values that are not
    finite and positive become 1); no released script writes that file."""
    u = _unit_axis(u, values)
    return values + (float(delta_sigma) * float(sigma_pc1)) * u


def paper_random_axes(u, n: int, generator) -> np.ndarray:
    """[n, p] random control axes as the released code makes them: i.i.d. Gaussian, normalised,
    *not* orthogonalised against the true axis u (only u's length p is used), so each overlaps it
    by a cosine of about +-1/sqrt(p). A random `axis_shift` reuses the true axis's sigma_pc1 when
    its file can be read (else 1). geomprobe's controls (`geomprobe.interventions.random_directions`)
    are orthogonal to u. `generator`: a numpy Generator or an int seed."""
    rng = _generator(generator)
    p = int(np.asarray(u).shape[-1])
    draws = rng.standard_normal((n, p))
    return draws / np.linalg.norm(draws, axis=1, keepdims=True)


def released_random_axis(dim: int, seed: int, layer: int) -> np.ndarray:
    """The released code's random axis for one layer, reproduced: float32 Gaussian from
    `np.random.default_rng(seed + layer)`, normalised (`hf_activations.py`, `_get_axis`). Seeding by
    the sum means layer l of seed s is layer l + 1 of seed s - 1: runs with consecutive seeds share
    axes at neighbouring layers. A run uses one axis per layer, not a distribution of axes."""
    draw = np.random.default_rng(seed + layer).normal(size=(dim,)).astype(np.float32)
    norm = float(np.linalg.norm(draw))
    if norm == 0.0 or not np.isfinite(norm):
        draw = np.zeros(dim, dtype=np.float32)
        draw[0], norm = 1.0, 1.0
    return draw / np.float32(norm)


def released_edited_layers(n_layers: int, layer_idx: int | None = None, layer_indices=None) -> list[int]:
    """The layers the released hooks actually edit, of 0..n_layers - 1. `layer_indices` (if non-empty)
    wins over `layer_idx`; a hook edits layer l only if l is literally in that list. The default
    `--layer-idx -1` of `extract_geometry_sula.py` is therefore never matched: nothing is edited and
    nothing says so (and its axis path becomes `entropy_axis_L-1_model.npz`)."""
    targets = list(layer_indices) if layer_indices else ([layer_idx] if layer_idx is not None else [])
    return [layer for layer in range(n_layers) if layer in targets]


# ----------------------------------------------------------------------------------------------
# Statistics


def _prepared(matrix, standardise: bool) -> np.ndarray:
    """Centred columns; divided by their (ddof 0) std if `standardise`, a zero-variance column kept
    as zeros (scikit-learn's StandardScaler; geomprobe drops such columns, with the same spectrum)."""
    x = np.asarray(matrix, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] < 2:
        raise ValueError(f"PCA needs a matrix [n >= 2, p], got shape {x.shape}")
    x = x - x.mean(axis=0)
    if standardise:
        std = x.std(axis=0)
        x = x / np.where(std > 10 * np.finfo(np.float64).eps, std, 1.0)
    return x


def pc_eigenvalues(matrix, standardise: bool) -> np.ndarray:
    """Covariance eigenvalues (ddof 1, scikit-learn's explained_variance_), largest first, of a
    matrix [n, p]: min(n, p) of them, of the centred columns (`standardise=False`: the raw PCA of
    `run_sula_main.py`, `visualize_sula_controls.py`) or of the standardised ones
    (`standardise=True`: `analyze_icl_sula.py`, `sula_experiments.py`, `analyze_geometry.py`, and
    geomprobe). Exact SVD; the released scripts' scikit-learn PCA picks the randomised solver,
    unseeded, for their shapes (150-250 x 512-2560 with 2 or 10 components): the same to within
    that solver's error."""
    singular = np.linalg.svd(_prepared(matrix, standardise), compute_uv=False)
    return singular**2 / (np.asarray(matrix).shape[0] - 1)


def pc_variance_fractions(matrix, standardise: bool) -> np.ndarray:
    """Explained-variance fractions [min(n, p)] of `pc_eigenvalues`, largest first: each over the
    whole spectrum (also what scikit-learn's explained_variance_ratio_ gives with n_components=10)."""
    eig = pc_eigenvalues(matrix, standardise)
    return eig / eig.sum()


def pc_coordinates(matrix, standardise: bool, n_components: int = 2, sign: str = "sklearn") -> np.ndarray:
    """Prompt coordinates [n, n_components] on the leading PCs. The sign of a PC is arbitrary, and so
    is the sign of any correlation with it; `sign` fixes it:
      "sklearn": scikit-learn >= 1.5 (its svd_flip on the loadings): each PC's largest-|loading|
                 entry positive; the released scripts' signed figures (rho -0.77) carry this sign
                 (or, with scikit-learn < 1.5, the next one);
      "coordinates": the largest-|coordinate| prompt positive (scikit-learn < 1.5, and geomprobe
                 before it orients PC1 by the entropy)."""
    if sign not in ("sklearn", "coordinates"):
        raise ValueError(f"unknown sign convention '{sign}': choose 'sklearn' or 'coordinates'")
    u, s, vt = np.linalg.svd(_prepared(matrix, standardise), full_matrices=False)
    k = min(n_components, len(s))
    coords = u[:, :k] * s[:k]
    for j in range(k):
        signed = vt[j] if sign == "sklearn" else coords[:, j]
        if signed[np.argmax(np.abs(signed))] < 0:
            coords[:, j] *= -1
    return coords


def participation_ratio(eigenvalues, top: int | None = None) -> float:
    """(sum l)^2 / sum l^2 over the `top` largest eigenvalues, or all of them (top=None, geomprobe's
    `pr`). The released `analyze_icl_sula.py` (`compute_pca_metrics`) keeps PCA(n_components=10),
    so its PR is over the top 10 only (with 1e-12 added to the denominator): at most 10 whatever the
    spectrum, and smaller than the full-spectrum PR when the tail is flat."""
    eig = np.sort(np.asarray(eigenvalues, dtype=np.float64).ravel())[::-1]
    if top is not None:
        eig = eig[:top]
    if eig.size == 0 or eig.sum() <= 0:
        raise ValueError("participation ratio needs at least one positive eigenvalue")
    return float(eig.sum() ** 2 / (eig**2).sum())


def correlation(x, y, method: str = "pearson") -> float:
    """Pearson (np.corrcoef, what `analyze_icl_sula.py`, `run_sula_main.py` and
    `compare_sula_interventions.py` use) or Spearman (scipy, what `sula_experiments.py`,
    `analyze_geometry.py` and geomprobe use) correlation of two vectors."""
    x, y = np.asarray(x, dtype=np.float64).ravel(), np.asarray(y, dtype=np.float64).ravel()
    if method == "pearson":
        return float(np.corrcoef(x, y)[0, 1])
    if method == "spearman":
        from scipy.stats import spearmanr

        return float(spearmanr(x, y)[0])
    raise ValueError(f"unknown correlation method '{method}': choose 'pearson' or 'spearman'")


# Which script does what to the n x p matrix of final-token vectors (one row per prompt).
MANIFOLD_SCRIPTS = {
    "analyze_icl_sula": dict(standardise=True, method="pearson", align_sign=False, pr_top=10,
                             readout="the code's last-layer values (Pythia: neox_split as released)",
                             file="paper3_llm/sula_pipeline/analyze_icl_sula.py"),
    "run_sula_main": dict(standardise=False, method="pearson", align_sign=True, pr_top=None,
                          readout="the code's last-layer values", file="paper3_llm/sula_pipeline/run_sula_main.py"),
    "sula_experiments": dict(standardise=True, method="spearman", align_sign=False, pr_top=None,
                             readout="hidden_states[-1] (post final norm)", file="paper3_llm/sula_experiments.py"),
    "analyze_geometry": dict(standardise=True, method="spearman", align_sign=False, pr_top=None,
                             readout="hidden_states[-1] (post final norm); entropy: full next-token, bits",
                             file="paper3_llm/analyze_geometry.py"),
}


def script_file(script: str) -> str:
    """The released file (relative to the repository root, as DEFINITIONS' released_file) that
    MANIFOLD_SCRIPTS[script] follows, e.g. "experiments/paper3_llm/sula_experiments.py"."""
    return "experiments/" + MANIFOLD_SCRIPTS[script]["file"]


def released_value_manifold(matrix, entropy_bits, script: str = "analyze_icl_sula") -> dict:
    """One released script's value-manifold numbers from an [n, p] matrix (one row per prompt, the
    last layer's final-token vectors flattened) and an entropy per prompt (Bayes entropy for the
    SULA scripts, the model's next-token entropy for `analyze_geometry`). `MANIFOLD_SCRIPTS` says
    what each script standardises, correlates and reads:
      analyze_icl_sula: standardised PCA, Pearson rho(PC1, H_bayes) with scikit-learn's sign, PR over
                        the top 10 eigenvalues;
      run_sula_main:    raw (centred) PCA, Pearson, PC1 flipped so that rho >= 0;
      sula_experiments, analyze_geometry: standardised PCA of post-norm hidden states, Spearman.
    Which script printed the recorded Pythia-410M figures (PC1 26.4%, rho -0.77) is not recorded:
    analyze_icl_sula and sula_experiments both print a signed rho with scikit-learn's sign.
    geomprobe: standardised values with the correct split, Spearman, PC1 oriented rho >= 0, PR over
    the whole spectrum, and for SULA the correlation given k as the headline."""
    try:
        settings = MANIFOLD_SCRIPTS[script]
    except KeyError:
        raise ValueError(f"unknown script '{script}': choose one of {', '.join(MANIFOLD_SCRIPTS)}") from None
    matrix = np.asarray(matrix, dtype=np.float64).reshape(len(matrix), -1)
    eig = pc_eigenvalues(matrix, settings["standardise"])
    fractions = eig / eig.sum()
    pc1 = pc_coordinates(matrix, settings["standardise"], n_components=1)[:, 0]
    rho = correlation(pc1, entropy_bits, settings["method"])
    if settings["align_sign"] and np.isfinite(rho) and rho < 0:
        rho = -rho
    return {"script": script, "pc1": float(fractions[0]), "pc2": float(fractions[1]) if len(fractions) > 1 else 0.0,
            "pc12": float(fractions[:2].sum()), "participation_ratio": participation_ratio(eig, settings["pr_top"]),
            "rho_pc1_entropy": rho, "method": settings["method"], "standardised": settings["standardise"]}


def attention_entropy_by_layer(attention_final_row) -> np.ndarray:
    """attention_final_row [n_prompts, n_layers, n_heads, seq] (the final query's row, zero-padded to
    a common seq) -> [n_layers] bits: per head -sum p log2(p + 1e-12) with p renormalised by
    (sum + 1e-12), then the mean over heads, then over prompts (`analyze_icl_sula.py`,
    `compute_attention_entropy`; probabilities from eager attention's output_attentions). This is
    geomprobe's Hbar(l) (METHODS.md section 4) up to those epsilons, and the two agree on real runs."""
    attn = np.asarray(attention_final_row, dtype=np.float64)
    if attn.ndim != 4:
        raise ValueError(f"attention must be [n_prompts, n_layers, n_heads, seq], got shape {attn.shape}")
    p = attn / (attn.sum(axis=-1, keepdims=True) + 1e-12)
    entropy = -(p * np.log2(p + 1e-12)).sum(axis=-1)
    return entropy.mean(axis=2).mean(axis=0)


def sula_label_entropy_bits(p_l1, p_l2) -> np.ndarray:
    """The released H_model: the full-vocabulary probabilities of the two label tokens, renormalised
    (p / (p1 + p2 + 1e-12)), binary entropy in bits with log2(p + 1e-12)
    (`extract_geometry_sula.py`, `compute_posterior_and_entropy_from_probs`). geomprobe's H_model is
    the same quantity (`geomprobe.analysis.sula_metrics.restrict_to_labels`)."""
    p1, p2 = np.asarray(p_l1, dtype=np.float64), np.asarray(p_l2, dtype=np.float64)
    total = p1 + p2 + 1e-12
    p1, p2 = p1 / total, p2 / total
    return -(p1 * np.log2(p1 + 1e-12) + p2 * np.log2(p2 + 1e-12))


def sula_calibration(model_entropy_bits, bayes_entropy_bits, k) -> dict:
    """The released entropy calibration: {str(k): {"mae_bits", "pearson"}, ..., "all": {...}} with
    MAE = mean |H_model - H_bayes| and Pearson r (NaN where H_bayes is constant or one prompt)
    (`analyze_icl_sula.py`, `compute_entropy_calibration`, per k; `compare_sula_interventions.py`
    adds "all"). geomprobe reports the same MAE with a bootstrap interval, beside baselines that
    read no evidence (a k-only predictor)."""
    model = np.asarray(model_entropy_bits, dtype=np.float64)
    bayes = np.asarray(bayes_entropy_bits, dtype=np.float64)
    k = np.asarray(k)

    def summary(mask) -> dict:
        sub_model, sub_bayes = model[mask], bayes[mask]
        pearson = float(np.corrcoef(sub_model, sub_bayes)[0, 1]) if len(sub_model) > 1 and sub_bayes.std() > 0 \
            else float("nan")
        return {"mae_bits": float(np.mean(np.abs(sub_model - sub_bayes))), "pearson": pearson}

    out = {str(value): summary(k == value) for value in sorted(set(k.tolist()))}
    out["all"] = summary(np.ones(len(model), dtype=bool))
    return out


# ----------------------------------------------------------------------------------------------
# The side-by-side registry (data only; a report formats it)

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


# ----------------------------------------------------------------------------------------------
# Side by side: each headline number under geomprobe's definition and the released code's

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

    from geomprobe.extraction import _pad_id, pad_batch, tokenize
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
    if adapter.family == "gpt_neox":
        layers = [neox_split(rows, shape.n_heads, shape.d_head)[1] for rows in outputs]
    else:
        layers = [rows.reshape(len(rows), shape.n_kv_heads, shape.d_head) for rows in outputs]
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
    if adapter.family == "gpt_neox":
        what = (f"query_key_value columns {2 * shape.n_heads * shape.d_head}-{3 * shape.n_heads * shape.d_head - 1} "
                f"read as (3, H, d): {', '.join(f'{kind}{head}' for head, kind in neox_released_blocks(shape.n_heads))}")
    elif hasattr(attention, "v_proj"):
        what = "v_proj output (the released reshape by query heads regroups the same numbers)"
    else:
        raise ConfigError(f"--definitions paper-code-as-released knows the released layouts of GPT-NeoX and "
                          f"Llama-like attention, not {type(attention).__name__}")
    [matrix] = final_token_outputs(loaded, prompts, [adapter.value_module(layer)], max_tokens, batch_size)
    if adapter.family == "gpt_neox":
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
    if adapter.family == "gpt_neox":
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
    if adapter.family == "gpt_neox":
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
