"""What the sula and ablation suites share, below both so neither imports the other: the SULA
prompt options (labels, k values, alpha, template), the setup that chooses labels and generates
the prompts for a model, the models a SULA prompt cannot run on, and the entropy axis each fits on
the main condition's final-token values (METHODS.md sections 7 and 8)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from geomprobe.analysis.sula_metrics import (
    SulaAxis,
    fit_axis,
    restrict_to_labels,
    spearman_or_none,
)
from geomprobe.errors import ConfigError
from geomprobe.extraction import extract
from geomprobe.rundir import atomic_save_npz
from geomprobe.sula_task import (
    CARRIER_POOL,
    CONTROLS,
    K0_TEMPLATE,
    LABEL_CANDIDATES,
    MASK_TOKEN,
    WINDTUNNEL_K0_TEMPLATE,
    SulaSpec,
    check_alpha,
    choose_labels,
)

from .base import (
    SuiteConfig,
    needs_next_token,
    option,
    windtunnel_task,
)


@dataclass
class SulaPromptOptions(SuiteConfig):
    """What the SULA prompts are (METHODS.md section 7); shared by the sula and ablation suites."""

    n_per_k: int = option(250, "prompts per number of examples k", min=2)
    k_values: tuple[int, ...] = option((0, 1, 2, 4, 8), "comma-separated numbers of examples", cli="--k", min=0)
    alpha: float = option(0.9, "probability that an example's label is the latent label", min=0, max=1,
                          exclusive_min=True)
    labels: tuple[str, str] | None = option(None, "two label words A,B (default: nonce words that are single "
                                                  "tokens of the model)")
    target: Literal["posterior", "predictive"] = option("posterior", "posterior (of the latent label) | predictive "
                                                                     "(of a fresh noisy label)")
    template: str | None = option(None, "prompt format with {examples} ('w: L' joined by ', ') and {query}; "
                                        "default '{examples}. {query}:'")

    def check(self):
        super().check()
        check_alpha(self.alpha)



def unsupported(loaded, run_config, suite: str = "sula") -> str | None:
    """Why a SULA-based suite cannot run on this model and configuration, or None."""
    if run_config.prompts:
        return (f"the {suite} suite writes its own prompts: drop --prompts (use --template to change the surface "
                "form)")
    task, _ = windtunnel_task(loaded)
    if task is not None and task.name != "sula":
        return f"the {suite} suite needs a language model or windtunnel-sula; {loaded.spec} is a '{task.name}' wind tunnel"
    return needs_next_token(loaded, suite)

def sula_setup(loaded, config: SulaPromptOptions, seed: int
               ) -> tuple[SulaSpec, object, dict | None, list[str], dict]:
    """(spec, label choice, wind-tunnel info or None, controls to run, skipped controls with why) for
    this model and these options (a SulaConfig runs its controls, any other none)."""
    controls = [c for c in CONTROLS if c in getattr(config, "controls", ())]
    task, info = windtunnel_task(loaded)
    carriers, k0_template, candidates, sweep, source = CARRIER_POOL, K0_TEMPLATE, LABEL_CANDIDATES, True, None
    if task is not None:
        if task.name != "sula":
            raise ConfigError(f"the sula suite needs a language model or windtunnel-sula; {loaded.spec} is a "
                              f"'{task.name}' wind tunnel")
        carriers, k0_template = tuple(task.carrier_words), WINDTUNNEL_K0_TEMPLATE  # only words it was trained on
        candidates, sweep, source = tuple(task.label_words), False, "windtunnel"
    labels = None if config.labels is None else list(config.labels)
    choice = choose_labels(loaded.tokenizer, labels=labels, candidates=candidates, sweep=sweep,
                           exclude=set(carriers) | {MASK_TOKEN}, context=f"{carriers[0]}:",
                           source=source if config.labels is None else "user")
    skipped = {}
    if choice.remap is None and "lexical_remap" in controls:
        controls.remove("lexical_remap")
        skipped["lexical_remap"] = ("only one label pair qualifies" + (" (the wind tunnel was trained on one pair)"
                                                                       if info is not None else ""))
    spec = SulaSpec(labels=choice.main, remap_labels=choice.remap, k_values=tuple(config.k_values),
                    n_per_k=config.n_per_k, alpha=config.alpha, target=config.target, carriers=carriers,
                    template=config.template, k0_template=k0_template, seed=seed)
    return spec, choice, info, controls, skipped


def _axis_arrays(axes: dict[int, SulaAxis | None], p: int) -> dict[str, np.ndarray]:
    layers = sorted(axes)
    empty = np.zeros(p)

    def stack(name, fill):
        return np.stack([getattr(axes[layer], name) if axes[layer] is not None else fill for layer in layers])

    return {"layers": np.array(layers), "mean": stack("mean", empty), "scale": stack("scale", np.ones(p)),
            "kept": stack("kept", np.zeros(p, dtype=bool)), "u": stack("u", empty),
            "sigma_u": np.array([axes[layer].sigma_u if axes[layer] is not None else 0.0 for layer in layers]),
            "pc1_explained": np.array([axes[layer].pc1_explained if axes[layer] is not None else np.nan
                                       for layer in layers])}


def main_axes(vectors: dict, H_model, last: int) -> dict[int, SulaAxis | None]:
    """The entropy axis of every extracted main layer; None where no column varies (e.g. layer 0
    values of prompts that all end in ":"), an error if that happens at the last layer."""
    axes = {}
    for layer, matrix in vectors.items():
        try:
            axes[layer] = fit_axis(matrix, H_model)
        except ValueError as error:
            if layer == last:
                raise ConfigError(f"sula axis at the last layer ({layer}): {error}") from None
            axes[layer] = None
    return axes


def layer_profile(vectors: dict, axes: dict, H_bayes, H_model) -> list[dict]:
    """Per main layer: PC1's share of variance and its Spearman rho with H_bayes and H_model."""
    profile = []
    for layer, matrix in vectors.items():
        axis = axes[layer]
        if axis is None:
            profile.append({"layer": layer, "pc1_explained": None, "rho_pc1_H_bayes": None, "rho_pc1_H_model": None,
                            "note": "no column varies across the prompts at this layer"})
            continue
        coords = axis.project(matrix)
        profile.append({"layer": layer, "pc1_explained": axis.pc1_explained,
                        "rho_pc1_H_bayes": spearman_or_none(coords, H_bayes),
                        "rho_pc1_H_model": spearman_or_none(coords, H_model)})
    return profile


def main_layers(adapter, layers) -> list[int]:
    """The layers extracted for the main condition: every layer (layers None) or `layers`, plus the last."""
    last = adapter.shape.n_layers - 1
    return sorted(set(range(last + 1) if layers is None else [adapter.check_layer(layer) for layer in layers])
                  | {last})


def extract_condition(ctx, spec: SulaSpec, choice, records, condition: str, layers: list[int], work, readout: str,
                      also: tuple[str, ...] = ()):
    """One condition's extraction, resumable in work/extraction-<condition>: the next-token probabilities
    of its two labels and the final-token `readout` (and `also`) at `layers`.
    Returns (extraction, model side {p_model_l1, H_model, label_mass} [n], vectors {layer: [n, p]})."""
    extraction = extract(ctx.loaded, [r.to_prompt() for r in records],
                         ctx.extraction_config(layers=layers, readouts=tuple(dict.fromkeys((readout, *also))),
                                               tokens=[choice.token_strings[w] for w in spec.pair(condition)]),
                         out_dir=work / f"extraction-{condition}", progress=ctx.progress, label=f"sula: {condition}")
    model = restrict_to_labels(extraction["token_probs"])
    vectors = {layer: extraction[readout][:, column].reshape(len(records), -1)
               for column, layer in enumerate(extraction.layers)}
    return extraction, model, vectors


def save_axis_file(path, axes: dict[int, SulaAxis | None], last: int, readout: str) -> None:
    """axis.npz: layers, mean, scale, kept, u, sigma_u, pc1_explained per main layer; analysis_layer, readout."""
    atomic_save_npz(path, **_axis_arrays(axes, axes[last].u.size), analysis_layer=np.array(last),
                    readout=np.array(readout))
