"""Entropy-axis interventions on value vectors inside the forward pass (METHODS.md section 8).

    axes = load_axes("runs/pythia-410m/ablation/axis.npz")     # layer -> InterventionAxis
    editor = make_editor({12: axes[12]}, "cut", cut_lambda=1.0)  # fn(layer, v) for edit_values
    with edit_values(loaded.adapter, [12], editor):
        edited = extract(loaded, prompts)                       # the model with the axis removed at layer 12

Each layer's axis lives in the flattened value space of that layer, p = n_kv_heads * d_head, in
standardised coordinates z = (v - mean) / scale. The operations (u: unit axis, sigma_u: std of
z . u over the SULA main prompts):

    cut    z' = z - lambda (z . u) u        (lambda = 1 removes the axis coordinate)
    only   z' = (z . u) u                   (keeps the axis coordinate alone)
    shift  z' = z + c sigma_u u             (c = +1 or -1)

mapped back to raw values v' = mean + scale z'. They are applied as v' = v + scale (z' - z),
which is the same map but leaves v bit for bit unchanged where z' = z (lambda = 0, or c = 0).
Columns that did not vary over the SULA prompts (`kept` False; dropped from the axis fit, u = 0
there) are left unchanged by every operation, `only` included.

Random control axes (section 8.3): Gaussian over the kept columns, orthogonalised against u,
normalised; `with_direction` puts one in place of u with the same standardisation and sigma_u, so
a random `shift` moves the values by the same distance c sigma_u as the true one.

`apply_op` is the pure map on torch tensors [..., p]; `make_editor` wraps it for
`geomprobe.hooks.edit_values` (all positions, or the final token only).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from geomprobe.errors import AnalysisError
from geomprobe.rundir import atomic_save_npz

OPS = ("cut", "only", "shift")
POSITIONS = ("all", "final")


@dataclass(frozen=True)
class InterventionAxis:
    """One layer's axis, everything needed to replay an intervention.

    mean, scale: [p] column means and standard deviations of the raw values over the SULA main
    prompts (scale 1 on dropped columns); kept: [p] bool, columns that varied; u: [p] unit vector,
    0 on dropped columns; sigma_u: std of z . u over the main prompts (of the true axis)."""

    mean: np.ndarray
    scale: np.ndarray
    kept: np.ndarray
    u: np.ndarray
    sigma_u: float

    @classmethod
    def from_sula(cls, axis) -> "InterventionAxis":
        """From a geomprobe.analysis.sula_metrics.SulaAxis."""
        return cls(mean=np.asarray(axis.mean, np.float64), scale=np.asarray(axis.scale, np.float64),
                   kept=np.asarray(axis.kept, bool), u=np.asarray(axis.u, np.float64), sigma_u=float(axis.sigma_u))

    def standardise(self, matrix) -> np.ndarray:
        """[n, p] raw values -> [n, p] z (0 on dropped columns)."""
        matrix = np.asarray(matrix, dtype=np.float64)
        return np.where(self.kept, (matrix - self.mean) / self.scale, 0.0)

    def project(self, matrix) -> np.ndarray:
        """[n, p] raw values -> [n] coordinates z . u."""
        return self.standardise(matrix) @ self.u

    def with_direction(self, direction) -> "InterventionAxis":
        """The same standardisation and sigma_u with another unit direction (a random control)."""
        return dataclasses.replace(self, u=np.asarray(direction, dtype=np.float64))


def random_directions(axis: InterventionAxis, n: int, seed: int, layer: int) -> np.ndarray:
    """[n, p] random unit directions over the kept columns, each orthogonal to axis.u. Draw j is
    seeded by (seed, layer, j), so it is the same for every operation and layer set."""
    out = np.zeros((n, axis.u.size))
    kept = axis.kept
    if kept.sum() < 2:
        raise AnalysisError(f"layer {layer}: a random axis orthogonal to u needs at least 2 varying columns, "
                         f"found {int(kept.sum())}")
    for draw in range(n):
        gaussian = np.random.default_rng([seed, layer, draw]).standard_normal(int(kept.sum()))
        direction = np.zeros(axis.u.size)
        direction[kept] = gaussian
        direction -= (direction @ axis.u) * axis.u
        direction -= (direction @ axis.u) * axis.u  # a second pass: orthogonal to rounding error
        out[draw] = direction / np.linalg.norm(direction)
    return out


# ----------------------------------------------------------------------------------------------
# The operations


def _tensors(axis: InterventionAxis, device) -> tuple[torch.Tensor, ...]:
    return tuple(torch.as_tensor(a, dtype=torch.float32, device=device) for a in (axis.mean, axis.scale, axis.u)) \
        + (torch.as_tensor(axis.kept, dtype=torch.bool, device=device),)


def apply_op(values: torch.Tensor, axis: InterventionAxis, op: str, cut_lambda: float = 1.0, shift_c: float = 1.0,
             tensors: tuple | None = None) -> torch.Tensor:
    """values [..., p] (raw, any float dtype) -> edited values, same shape and dtype.
    Computed in float32; `tensors` (mean, scale, u, kept on the values' device) may be passed to
    avoid converting the axis again."""
    mean, scale, u, kept = tensors if tensors is not None else _tensors(axis, values.device)
    if values.shape[-1] != u.shape[0]:
        raise ValueError(f"values have {values.shape[-1]} columns, the axis {u.shape[0]}")
    x = values.float()
    if op == "shift":
        delta = (float(shift_c) * axis.sigma_u * u).expand_as(x)
    elif op in ("cut", "only"):
        z = torch.where(kept, (x - mean) / scale, torch.zeros((), device=x.device))
        coord = (z @ u).unsqueeze(-1)
        if op == "cut":
            delta = (-float(cut_lambda) * coord) * u
        else:
            delta = torch.where(kept, coord * u - z, torch.zeros((), device=x.device))
    else:
        raise ValueError(f"unknown operation '{op}': choose one of {', '.join(OPS)}")
    return values + (scale * delta).to(values.dtype)


def make_editor(axes: dict[int, InterventionAxis], op: str, positions: str = "all",
                final_index: torch.Tensor | None = None, cut_lambda: float = 1.0, shift_c: float = 1.0):
    """fn(layer, v) for geomprobe.hooks.edit_values: v [batch, pos, n_kv_heads, d_head] edited with
    `op` along axes[layer]; positions "all", or "final" (only v[b, final_index[b]], which needs the
    batch's final_index [batch])."""
    if op not in OPS:
        raise ValueError(f"unknown operation '{op}': choose one of {', '.join(OPS)}")
    if positions not in POSITIONS:
        raise ValueError(f"unknown positions '{positions}': choose one of {', '.join(POSITIONS)}")
    if positions == "final" and final_index is None:
        raise ValueError("positions='final' needs the batch's final_index")
    cache: dict = {}

    def edit(layer: int, values: torch.Tensor) -> torch.Tensor:
        axis = axes[layer]
        key = (layer, values.device)
        if key not in cache:
            cache[key] = _tensors(axis, values.device)
        flat = values.reshape(*values.shape[:2], -1)
        if positions == "all":
            edited = apply_op(flat, axis, op, cut_lambda, shift_c, cache[key])
        else:
            rows = torch.arange(flat.shape[0], device=flat.device)
            index = final_index.to(flat.device)
            edited = flat.clone()
            edited[rows, index] = apply_op(flat[rows, index], axis, op, cut_lambda, shift_c, cache[key])
        return edited.reshape(values.shape)

    return edit


# ----------------------------------------------------------------------------------------------
# Saving and loading


def save_axes(path, axes: dict[int, InterventionAxis], **extra) -> None:
    """axes.npz: layers [m], mean/scale/kept/u [m, p], sigma_u [m], plus any extra arrays."""
    layers = sorted(axes)
    atomic_save_npz(Path(path), layers=np.array(layers),
                    **{name: np.stack([getattr(axes[layer], name) for layer in layers])
                       for name in ("mean", "scale", "kept", "u")},
                    sigma_u=np.array([axes[layer].sigma_u for layer in layers]), **extra)


def load_axes(path) -> dict[int, InterventionAxis]:
    """Read an axis file written by save_axes or by the SULA suite (<run>/sula/axis.npz); layers
    whose axis could not be fitted (no varying column) are left out."""
    with np.load(path) as data:
        out = {}
        for row, layer in enumerate(data["layers"]):
            if not data["kept"][row].any():
                continue
            out[int(layer)] = InterventionAxis(mean=data["mean"][row].astype(np.float64),
                                               scale=data["scale"][row].astype(np.float64),
                                               kept=data["kept"][row].astype(bool),
                                               u=data["u"][row].astype(np.float64),
                                               sigma_u=float(data["sigma_u"][row]))
    return out
