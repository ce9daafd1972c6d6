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

(each displacement z' - z times the axis's gain: 1 for the true axis), mapped back to raw
values v' = mean + scale z'. They are applied as v' = v + scale (z' - z),
which is the same map but leaves v bit for bit unchanged where z' = z (lambda = 0, or c = 0).
Columns that did not vary over the SULA prompts (`kept` False; dropped from the axis fit, u = 0
there) are left unchanged by every operation, `only` included.

Random control axes (section 8.3) displace the values as much as the true axis does, as the
next computation reads them. A control is a unit direction r orthogonal to u with the same
operation (`matched_directions`: drawn from the values' own covariance over the main prompts, PC1
removed; `random_directions`: isotropic, kept for comparison), its displacement z' - z times a
gain. The gain equalises the displacement the edited layer's attention hands to its output
projection at the final token: for each query head j, Delta_j = sum_t a_jt s * (z'_t - z_t) over
the positions t the edit touches (a_jt: head j's attention from the final query; s: the scales,
so raw value units; only head j's kv slice), and gain_r = sqrt(E_true / E_r) with
E = mean over the main prompts of sum_j ||Delta_j||^2 (`read_displacements` measures E in one
unedited pass; `matched_gains`). Measured on random-init Llamas: without a gain,
cutting PC1 beats isotropic axes in any network (rank 1 of 20 in most); matching the mean
||z' - z||^2 of the final token alone over-corrects (the true axis last in many), and matching it
position by position under-corrects, because the true axis's coordinate is coherent across the
positions the final query mixes and a random one's is not. `with_direction(r, gain)` puts a
control in place of u with the same standardisation and sigma_u.

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
    0 on dropped columns; sigma_u: std of z . u over the main prompts (of the true axis); gain: the
    factor on every displacement z' - z (1 for the true axis; a matched control's matched_gain)."""

    mean: np.ndarray
    scale: np.ndarray
    kept: np.ndarray
    u: np.ndarray
    sigma_u: float
    gain: float = 1.0

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

    def with_direction(self, direction, gain: float = 1.0) -> "InterventionAxis":
        """The same standardisation and sigma_u with another unit direction and a gain (a random
        control; matched_gain gives the gain that matches the true edit's displacement)."""
        return dataclasses.replace(self, u=np.asarray(direction, dtype=np.float64), gain=float(gain))


def _unit_orthogonal(axis: InterventionAxis, direction: np.ndarray, layer: int) -> np.ndarray:
    direction = np.where(axis.kept, direction, 0.0)
    direction = direction - (direction @ axis.u) * axis.u
    direction = direction - (direction @ axis.u) * axis.u  # a second pass: orthogonal to rounding error
    norm = float(np.linalg.norm(direction))
    if not norm > 1e-12:
        raise AnalysisError(f"layer {layer}: no direction orthogonal to the entropy axis varies over the SULA "
                            "prompts, so there is no random control axis to compare it with")
    return direction / norm


def random_directions(axis: InterventionAxis, n: int, seed: int, layer: int) -> np.ndarray:
    """[n, p] isotropic random unit directions over the kept columns, each orthogonal to axis.u
    (unmatched: used along with gain 1 they remove far less than the true axis). Draw j is seeded
    by (seed, layer, j), so it is the same for every operation and layer set."""
    out = np.zeros((n, axis.u.size))
    kept = axis.kept
    if kept.sum() < 2:
        raise AnalysisError(f"layer {layer}: a random axis orthogonal to u needs at least 2 varying columns, "
                            f"found {int(kept.sum())}")
    for draw in range(n):
        gaussian = np.random.default_rng([seed, layer, draw]).standard_normal(int(kept.sum()))
        direction = np.zeros(axis.u.size)
        direction[kept] = gaussian
        out[draw] = _unit_orthogonal(axis, direction, layer)
    return out


def matched_directions(axis: InterventionAxis, matrix, n: int, seed: int, layer: int) -> np.ndarray:
    """[n, p] unit directions orthogonal to axis.u drawn from the values' own covariance: r is
    z_c^T g / sqrt(n_prompts) with g standard Gaussian over the prompts and z_c the standardised,
    centred values of `matrix` ([n_prompts, p] raw final-token values of the main prompts), so
    r ~ N(0, cov(z)), with its u component (PC1) removed, then normalised. Directions lie in the
    span of the values, so each has a spread sigma_r > 0 over the prompts. Draw j is seeded by
    (seed, layer, j)."""
    z = axis.standardise(matrix)
    z = z - z.mean(axis=0)
    out = np.zeros((n, axis.u.size))
    for draw in range(n):
        gaussian = np.random.default_rng([seed, layer, draw]).standard_normal(len(z))
        out[draw] = _unit_orthogonal(axis, z.T @ gaussian / np.sqrt(len(z)), layer)
    return out


def direction_sigmas(axis: InterventionAxis, matrix, directions) -> np.ndarray:
    """[n] sigma_r: the std over the prompts of z . r for each of `directions` [n, p] (matrix: the
    [n_prompts, p] raw main-prompt values the axis was fitted on)."""
    return np.asarray(axis.standardise(matrix) @ np.asarray(directions, dtype=np.float64).T).std(axis=0)


class ReadDisplacement:
    """Accumulates, over batches, the displacement an edit hands the attention output at the final
    query (module docstring): for each op and each direction (row 0 the true axis u, then the
    controls), the sum over prompts of sum_j ||Delta_j||^2 for a unit-gain edit (cut lambda 1,
    shift c 1).

    add(probs [b, n_heads, T] final-row attention, values [b, T, p] raw values at every position,
    final_index [b]) for each batch; energies() -> {op: [1 + n] mean over prompts}."""

    def __init__(self, axis: InterventionAxis, directions, n_heads: int, n_kv_heads: int, positions: str = "all"):
        self.axis, self.positions = axis, positions
        self.directions = np.vstack([axis.u, np.asarray(directions, dtype=np.float64)])  # [1 + n, p]
        self.n_heads, self.n_kv_heads = n_heads, n_kv_heads
        self.d_head = axis.u.size // n_kv_heads
        self.kv_of = np.arange(n_heads) // (n_heads // n_kv_heads)
        self.sums = {op: np.zeros(len(self.directions)) for op in OPS}
        self.n = 0

    def _slice(self, array, g):
        return array[..., g * self.d_head:(g + 1) * self.d_head]

    def add(self, probs, values, final_index) -> None:
        axis = self.axis
        probs = probs.detach().double().cpu()
        values = values.detach().double().cpu().reshape(*values.shape[:2], -1)
        rows = torch.arange(values.shape[0])
        if self.positions == "final":  # only the final position is edited: keep its weight alone
            weights = torch.zeros_like(probs)
            weights[rows, :, final_index] = probs[rows, :, final_index]
            probs = weights
        kept = torch.as_tensor(axis.kept)
        z = torch.where(kept, (values - torch.as_tensor(axis.mean)) / torch.as_tensor(axis.scale),
                        torch.zeros((), dtype=torch.float64))
        mixed = torch.einsum("bht,btp->bhp", probs[..., :z.shape[1]], z).numpy()  # [b, H, p]
        mass = probs.sum(-1).numpy()  # [b, H]: 1 with every position edited
        dirs, scale = self.directions, axis.scale
        coords = mixed @ dirs.T  # [b, H, 1 + n]
        for j in range(self.n_heads):
            g = self.kv_of[j]
            s_g, r_g, w_g = self._slice(scale, g), self._slice(dirs, g), self._slice(mixed[:, j], g)  # [d], [k, d], [b, d]
            read = ((s_g * r_g) ** 2).sum(-1)  # [k]: ||s_g * r_g||^2
            c = coords[:, j]  # [b, k]
            self.sums["cut"] += (c ** 2 * read).sum(0)
            self.sums["shift"] += (mass[:, j, None] ** 2 * read).sum(0) * axis.sigma_u ** 2
            # only: s_g * ((w . r) r_g - w_g), w_g zero on dropped columns
            cross = (w_g * s_g ** 2) @ r_g.T  # [b, k]
            self.sums["only"] += (c ** 2 * read - 2 * c * cross + ((s_g * w_g) ** 2).sum(-1)[:, None]).sum(0)
        self.n += values.shape[0]

    def energies(self) -> dict[str, np.ndarray]:
        return {op: total / max(self.n, 1) for op, total in self.sums.items()}


def read_displacements(loaded, prompts, extraction_config, candidates: dict, positions: str = "all") -> dict:
    """One unedited pass over `prompts` (geomprobe.extraction.extract with `extraction_config`):
    {layer: ReadDisplacement.energies()} for candidates {layer: (axis, directions [n, p])}, from
    the final query's attention rows and the values at every position of each candidate layer."""
    import contextlib

    from geomprobe.attention import FinalRowCapture, capture_final_row
    from geomprobe.extraction import extract
    from geomprobe.hooks import watch

    shape = loaded.adapter.shape
    readers = {layer: ReadDisplacement(axis, directions, shape.n_heads, shape.n_kv_heads, positions)
               for layer, (axis, directions) in candidates.items()}

    @contextlib.contextmanager
    def reading(final_index):
        capture = FinalRowCapture(final_index=final_index.to(loaded.model.get_input_embeddings().weight.device),
                                  layers=frozenset(readers), keep_probs=True)
        values: dict[int, torch.Tensor] = {}

        def keeper(layer):
            return lambda tensor: values.__setitem__(layer, tensor.detach())

        with capture_final_row(capture), watch(loaded.adapter, {(layer, "values"): keeper(layer) for layer in readers}):
            yield
        for layer, reader in readers.items():
            reader.add(capture.probs[layer], values[layer], final_index.cpu())

    extract(loaded, prompts, extraction_config, progress=False, batch_context=reading)
    return {layer: reader.energies() for layer, reader in readers.items()}


def matched_gains(energies: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """{op: [n] gain of each control}: sqrt(E_true / E_r) from ReadDisplacement.energies() (row 0
    the true axis). A control whose edit hands the attention nothing (E_r = 0) cannot be matched:
    AnalysisError."""
    out = {}
    for op, values in energies.items():
        true, controls = float(values[0]), np.asarray(values[1:], dtype=np.float64)
        if not np.all(controls > 0):
            raise AnalysisError(f"a random {op} control displaces nothing that the attention reads, so it cannot be "
                                "matched to the true axis")
        out[op] = np.sqrt(true / controls)
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
    gain = float(axis.gain)
    if op == "shift":
        delta = (gain * float(shift_c) * axis.sigma_u * u).expand_as(x)
    elif op in ("cut", "only"):
        z = torch.where(kept, (x - mean) / scale, torch.zeros((), device=x.device))
        coord = (z @ u).unsqueeze(-1)
        if op == "cut":
            delta = (-gain * float(cut_lambda) * coord) * u
        else:
            delta = torch.where(kept, coord * u - z, torch.zeros((), device=x.device))
            if gain != 1.0:
                delta = gain * delta
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
    whose axis could not be fitted (no varying column) are left out. A FIFO, a device or a folder
    there is a one-line RunDirectoryError (np.load would block on a FIFO)."""
    from geomprobe.files import regular_file
    from geomprobe.readers import ARRAY

    with np.load(regular_file(path, ARRAY, "fit the axes again")) as data:
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
