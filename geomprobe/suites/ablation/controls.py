"""The ablation suite's matched random-axis controls (METHODS.md section 8.3, package docstring,
item 4): their directions and gains, the refusals where a gain would amplify rounding, and their
records in random_axes.npz and results.json. The passes that run them are passes.py's."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

import numpy as np

from geomprobe.rundir import atomic_save_npz

from .axis import paper_code_randoms

if TYPE_CHECKING:
    from geomprobe.interventions import InterventionAxis


CONTROL_VERSION = "matched-read-displacement-1"  # in every pass fingerprint: passes of other controls are rerun
CONTROL_NOTE = ("matched random axes: unit directions drawn from the values' own covariance over the SULA main "
                "prompts (PC1 removed: orthogonal to u), seeded by (seed, layer, draw), with the same operation, each "
                "edit's displacement times a gain so that the displacement the edited layer's attention hands its "
                "output projection at the final token (sum over heads of ||sum_t a_t s (z'_t - z_t)||^2, mean over "
                "the main prompts, measured in one unedited pass) equals the true edit's; per axis sigma_r (std of "
                "z.r), the measured displacements and the gains in axis.controls and random_axes.npz. Without the "
                "gain cutting PC1 wins in any network, trained or not (METHODS.md section 8.3)")


def control_axes(loaded, prompts, extraction_config, edit_base: dict[int, InterventionAxis],
                 main_values: dict[int, np.ndarray], n_random: int, seed: int, positions: str,
                 paper_code: bool, released: bool = False) -> dict[int, dict]:
    """{layer: {"directions" [n, p], "sigma_r" [n], "energies" {op: [1 + n]} or None, "gains" {op: [n]}}}
    for each edited layer: the random control axes (METHODS.md section 8.3), drawn from the
    values' own covariance (PC1 removed), each op's gain matching the displacement the attention
    reads (interventions.read_displacements, one unedited pass). paper-code: the released code's
    random axes, with gain 1 (not matched, as released); their energies are still measured, except
    on the released split (released: not the values the attention mixes)."""
    from geomprobe.interventions import OPS, direction_sigmas, matched_directions, matched_gains, read_displacements

    if paper_code:
        directions = paper_code_randoms(edit_base, n_random, seed)
    else:
        directions = {layer: matched_directions(edit_base[layer], main_values[layer], n_random, seed, layer)
                      for layer in edit_base}
    energies = ({layer: None for layer in edit_base} if released else
                read_displacements(loaded, prompts, extraction_config,
                                   {layer: (edit_base[layer], directions[layer]) for layer in edit_base}, positions))
    out = {}
    for layer in edit_base:
        gains = ({op: np.ones(n_random) for op in OPS} if paper_code
                 else matched_gains(energies[layer]))
        out[layer] = {"directions": directions[layer],
                      "sigma_r": direction_sigmas(edit_base[layer], main_values[layer], directions[layer]),
                      "energies": energies[layer], "gains": gains,
                      "refused": {op: refused_control(gains[op], layer, op) for op in OPS}}
    return out


MAX_CONTROL_GAIN = 100.0  # untrained tiny Llamas' matched gains span 0.48-4.3 (912 controls, 24 models)


def refused_control(gains, layer: int, op: str) -> str | None:
    """Why the matched controls of `op` at `layer` are refused (None: they are not). A gain above
    MAX_CONTROL_GAIN means the values barely vary along a control direction, so matching the true
    edit's displacement would multiply little more than rounding (a planted axis that carries all
    the variance gave gains near 1e7)."""
    gains = np.asarray(gains, dtype=np.float64)
    if gains.size and np.all(np.isfinite(gains)) and float(gains.max()) <= MAX_CONTROL_GAIN:
        return None
    return (f"layer {layer}: the values barely vary along the matched {op} controls' directions (gain up to "
            f"{float(np.nanmax(gains)):.3g}, limit {MAX_CONTROL_GAIN:g}): a matched edit would amplify rounding, "
            "so this condition has no random-axis control (the untrained copies still compare it)")


def refused_for(controls: dict[int, dict], op: str, layers) -> list[str]:
    """The reasons the controls of `op` are refused at any of `layers` ([]: none is)."""
    return [why for layer in layers if (why := (controls.get(layer) or {}).get("refused", {}).get(op))]


def save_controls(path, controls: dict[int, dict], seed: int, note: str) -> None:
    from geomprobe.interventions import OPS

    arrays = {}
    for layer, entry in controls.items():
        arrays[f"layer_{layer}"] = entry["directions"]
        arrays[f"sigma_r_{layer}"] = entry["sigma_r"]
        for op in OPS:
            arrays[f"gain_{op}_{layer}"] = entry["gains"][op]
            if entry["energies"] is not None:
                arrays[f"energy_{op}_{layer}"] = entry["energies"][op]
    atomic_save_npz(path, **arrays, seed=np.array(seed), control=np.array(note))


def controls_summary(controls: dict[int, dict], edit_base: dict[int, InterventionAxis]) -> dict:
    """results.json's per-layer record of the controls: sigma_u, each control's sigma_r, and per op
    the displacement the attention reads (true, each control before its gain) and the gains."""
    from geomprobe.interventions import OPS

    return {str(layer): {"sigma_u": edit_base[layer].sigma_u,
                         "sigma_r": [float(v) for v in entry["sigma_r"]],
                         "read_displacement": None if entry["energies"] is None else {
                             op: {"true": float(entry["energies"][op][0]),
                                  "random_unit_gain": [float(v) for v in entry["energies"][op][1:]]} for op in OPS},
                         "gain": {op: [float(v) for v in entry["gains"][op]] for op in OPS},
                         "refused": {op: why for op, why in (entry.get("refused") or {}).items() if why}}
            for layer, entry in controls.items()}


def _controls_digest(controls: dict[int, dict]) -> str:
    from geomprobe.interventions import OPS

    digest = hashlib.sha256()
    for layer in sorted(controls):
        digest.update(np.ascontiguousarray(controls[layer]["directions"]).tobytes())
        for op in OPS:
            digest.update(np.ascontiguousarray(controls[layer]["gains"][op]).tobytes())
    return digest.hexdigest()[:16]
