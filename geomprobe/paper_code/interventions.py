"""The released code's value edits (axis cut, only, shift), its random control axes and the layers its
hooks really edit (METHODS.md sections 8 and 11): pure functions on given vectors, apart from
geomprobe.interventions, which edits a running model with geomprobe's own definitions.
"""

from __future__ import annotations

import numpy as np

from .layouts import _generator, _is_torch, _like


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
