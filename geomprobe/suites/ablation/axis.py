"""The ablation suite's entropy axes (package docstring, item 2): the sula suite's reused or the SULA
main condition fitted here, and the released code's axes and value split for --definitions
paper-code and paper-code-as-released. The passes that edit along them are passes.py's."""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from geomprobe.interventions import InterventionAxis


def _same_settings(saved: dict, spec) -> bool:
    wanted = json.loads(json.dumps(spec.describe()))
    return all(saved.get(key) == value for key, value in wanted.items())


def reusable_sula_axes(run_path, spec, needed: list[int]) -> dict[int, InterventionAxis] | None:
    """The finished sula suite's axes in this run directory, if it used the same prompt settings,
    read values and tried every needed layer (those without an axis are left out); else None."""
    from geomprobe.interventions import load_axes

    sula, manifest_path = run_path / "sula", run_path / "manifest.json"
    if not ((sula / "results.json").exists() and (sula / "axis.npz").exists() and manifest_path.exists()):
        return None
    from geomprobe.errors import GeomprobeError
    from geomprobe.readers import read_manifest, read_results

    try:  # unreadable: not reusable (the sula main condition is fitted here instead)
        manifest, results = read_manifest(manifest_path), read_results(sula / "results.json")
    except GeomprobeError:
        return None
    if (manifest["suites"].get("sula") or {}).get("status") != "complete":
        return None
    if not isinstance(results.get("settings"), dict) or not _same_settings(results["settings"], spec):
        return None
    if not (sula / "axis.npz").is_file():  # a FIFO or a device (np.load would block): fitted here instead
        return None
    with np.load(sula / "axis.npz") as data:
        if str(data["readout"]) != "values":
            return None
        fitted_layers = {int(layer) for layer in data["layers"]}  # with or without an axis
    return load_axes(sula / "axis.npz") if set(needed) <= fitted_layers else None


def fit_axes(ctx, spec, choice, records, needed: list[int], work) -> dict[int, InterventionAxis]:
    """Run the SULA main condition through the sula suite's code (extraction in
    work/extraction-main, axes in work/axis.npz) and return the layers whose axis could be fitted."""
    from geomprobe.interventions import InterventionAxis
    from geomprobe.suites.entropy_axis import extract_condition, main_axes, main_layers, save_axis_file

    last = ctx.loaded.adapter.shape.n_layers - 1
    _, model, vectors = extract_condition(ctx, spec, choice, records, "main", main_layers(ctx.loaded.adapter, needed),
                                          work, "values")
    axes = main_axes(vectors, model["H_model"], last)
    save_axis_file(work / "axis.npz", axes, last, "values")
    return {layer: InterventionAxis.from_sula(axis) for layer, axis in axes.items() if axis is not None}


PAPER_CODE_EDITS = ("--definitions paper-code: the edits follow the released code (hf_activations.py): raw, "
                    "uncentred values v, u the unit PC1 of the raw (centred) main-prompt values at each edited layer "
                    "oriented so that rho(v.u, H_model) >= 0, sigma = std of v.u; cut v - lambda (v.u) u (the "
                    "released lambda_scale is 1 - lambda), only (v.u) u, shift v +- sigma u; random axes Gaussian "
                    "unit vectors not orthogonalised against u, seeded by (seed, layer), with the true axis's sigma. "
                    "What is measured (the axis-entropy correlation on geomprobe's standardised axes, the output) "
                    "is geomprobe's")


RELEASED_EDITS = ("--definitions paper-code-as-released: as paper-code, on the released code's value split "
                  "(hf_activations.py): on GPT-NeoX the columns [2 H d, 3 H d) of the fused query_key_value output "
                  "read as (3, H, d), which the released interventions write back into (for Pythia-410M head 10's "
                  "v, then q, k and v of heads 11-15), so an edit there also moves queries and keys; on Llama-like "
                  "models the v_proj output, the model's own values (the same edit as paper-code). The axis is "
                  "the raw-PCA PC1 of those columns at the final token over the SULA main prompts; the random "
                  "axes are the released ones (gain 1, not matched; no attention read)")


def released_split(loaded) -> bool:
    """Whether --definitions paper-code-as-released edits other columns than the model's values:
    GPT-NeoX's fused query_key_value output, read as (3, H, d) (geomprobe.paper_code.neox_split)."""
    from geomprobe.families import released_fused_qkv

    return released_fused_qkv(loaded.model.config.model_type)


def released_edit(loaded, edit_axes: dict[int, InterventionAxis], op: str, positions: str, final_index, params):
    """The context manager that applies `op` along edit_axes to the released code's "values": columns
    [2 H d, 3 H d) of each edited layer's fused query_key_value output (every position, or the final
    token), before anything reads it."""
    import torch

    from geomprobe import interventions
    from geomprobe.hooks import Hook, hooked

    apply_op = interventions.apply_op
    shape = loaded.adapter.shape
    width = shape.n_heads * shape.d_head

    def hook(axis):
        def on_output(module, args, output):
            part = output[..., 2 * width:3 * width]
            edited = output.clone()
            if positions == "all":
                edited[..., 2 * width:3 * width] = apply_op(part, axis, op, **params)
            else:
                rows = torch.arange(output.shape[0], device=output.device)
                index = final_index.to(output.device)
                edited[rows, index, 2 * width:3 * width] = apply_op(part[rows, index], axis, op, **params)
            return edited

        return on_output

    return hooked([Hook(loaded.adapter.value_module(layer), hook(axis), prepend=True)
                   for layer, axis in sorted(edit_axes.items())])


def _released_what(loaded, layers) -> str:
    """What the released code calls the values of this model (geomprobe.paper_code)."""
    from geomprobe.paper_code import neox_released_blocks

    shape = loaded.adapter.shape
    if released_split(loaded):
        blocks = ", ".join(f"{kind}{head}" for head, kind in neox_released_blocks(shape.n_heads))
        return (f"layers {', '.join(map(str, layers))}: query_key_value columns {2 * shape.n_heads * shape.d_head}-"
                f"{3 * shape.n_heads * shape.d_head - 1} read as (3, H, d): {blocks}")
    return "the v_proj output (the model's own values: the released reshape only regroups them)"


def paper_code_axes(values: dict[int, np.ndarray], H_model) -> dict[int, InterventionAxis]:
    """The released code's edit axes, as InterventionAxis objects that geomprobe's apply_op turns into
    its raw-value edits (mean 0, scale 1, every column kept): values {layer: [n_prompts, p] raw
    final-token values of the SULA main prompts}."""
    from scipy.stats import spearmanr

    from geomprobe.interventions import InterventionAxis

    out = {}
    for layer, matrix in values.items():
        matrix = np.asarray(matrix, dtype=np.float64)
        centred = matrix - matrix.mean(axis=0)
        u = np.linalg.svd(centred, full_matrices=False)[2][0]
        coords = matrix @ u
        rho = spearmanr(coords, H_model)[0] if np.std(coords) > 0 else 0.0
        if np.isfinite(rho) and rho < 0:
            u, coords = -u, -coords
        out[layer] = InterventionAxis(mean=np.zeros(u.size), scale=np.ones(u.size), kept=np.ones(u.size, bool), u=u,
                                      sigma_u=float(np.std(coords)))
    return out


def paper_code_randoms(edit_axes: dict[int, InterventionAxis], n: int, seed: int) -> dict[int, np.ndarray]:
    from geomprobe.paper_code import paper_random_axes

    return {layer: paper_random_axes(axis.u, n, np.random.default_rng([seed, layer])) for layer, axis in edit_axes.items()}


def _without_control(axes: dict[int, InterventionAxis], layers, main_extraction, seed: int) -> list[int]:
    """The layers among `layers` whose main-prompt values vary along their entropy axis only (e.g.
    layer 0 when every SULA prompt ends in the same token): no matched control direction exists."""
    from geomprobe.errors import AnalysisError
    from geomprobe.interventions import matched_directions

    values = _main_values(main_extraction, layers)
    out = []
    for layer in layers:
        try:
            matched_directions(axes[layer], values[layer], 1, seed, layer)
        except AnalysisError:
            out.append(layer)
    return out


def _main_values(path, layers) -> dict[int, np.ndarray]:
    """{layer: [n, p]} raw final-token values of the SULA main prompts from the axis fit's extraction."""
    from geomprobe.extraction import load_extraction

    extraction = load_extraction(path)
    values = extraction["values"]
    return {layer: np.asarray(values[:, extraction.layers.index(layer)], dtype=np.float64).reshape(len(values), -1)
            for layer in layers}


def _axes_digest(axes: dict[int, InterventionAxis]) -> str:
    digest = hashlib.sha256()
    for layer in sorted(axes):
        axis = axes[layer]
        for array in (axis.mean, axis.scale, axis.kept, axis.u, np.array([axis.sigma_u])):
            digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest()[:16]
