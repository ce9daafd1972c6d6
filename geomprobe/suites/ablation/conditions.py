"""The ablation suite's conditions, as its options choose them: --ops and --lambda parsed into
operations, --edit-layers (else paper III's layers by depth) into layer sets, and the layers each set
is measured on. Plain functions of the options and the model's depth, apart from the run
because the planner (plan.py) calls them too."""

from __future__ import annotations

import math

from geomprobe.errors import ConfigError

# Paper III's layer choice on Pythia-410M (24 layers), used as fractions of depth.
PAPER_DEPTH = 24
PAPER_SINGLE = (12, 23)
PAPER_MULTI = (8, 12, 16, 20, 23)


def parse_ops(ops, cut_lambda: float) -> list[tuple[str, str, dict]]:
    """"cut,only,shift" -> [(name, op, parameters)]: shift runs at +1 and -1 sigma_u."""
    names = [o.strip() for o in ops.split(",")] if isinstance(ops, str) else list(ops)
    names = [o for o in names if o]
    unknown = [o for o in names if o not in ("cut", "only", "shift")]
    if unknown or not names:
        raise ConfigError(f"--ops: unknown operation(s) {', '.join(unknown) or '(none given)'}; choose a "
                          "comma-separated list of cut, only, shift")
    if not math.isfinite(cut_lambda):
        raise ConfigError(f"--lambda must be a finite number, got {cut_lambda}")
    out = []
    for name in ("cut", "only", "shift"):
        if name in names:
            if name == "cut":
                out.append(("cut", "cut", {"cut_lambda": float(cut_lambda)}))
            elif name == "only":
                out.append(("only", "only", {}))
            else:
                out += [("shift+1", "shift", {"shift_c": 1.0}), ("shift-1", "shift", {"shift_c": -1.0})]
    return out


def default_layer_sets(n_layers: int) -> list[tuple[str, list[int]]]:
    """Paper III's layers (of 24) as fractions of depth: l / 24 * n_layers, rounded half up, capped
    at n_layers - 2 so that a layer follows every set, deduplicated; when the multi-layer fractions
    collapse to fewer than two layers, the multi set is layers 0 to n_layers - 2. 24 layers give
    single 12 and 22 and multi 8, 12, 16, 20, 22; 3 layers single 1 and multi 0, 1."""
    check_depth(n_layers)
    top = n_layers - 2

    def scaled(layer):
        return min(top, int(math.floor(layer / PAPER_DEPTH * n_layers + 0.5)))

    singles = sorted({scaled(layer) for layer in PAPER_SINGLE})
    multi = sorted({scaled(layer) for layer in PAPER_MULTI})
    if len(multi) < 2:
        multi = list(range(top + 1))
    return named_layer_sets(singles, multi)


def check_depth(n_layers: int) -> None:
    """A one-line ConfigError for a model too shallow to have a layer downstream of an edit."""
    if n_layers < 2:
        raise ConfigError(f"the ablation suite measures the axis-entropy correlation downstream of the edited layer, "
                          f"and a model with {n_layers} layer has none: use a model with at least 2 layers")


def named_layer_sets(singles, multi) -> list[tuple[str, list[int]]]:
    """[("L<l>", [l]) for each single layer] and ("multi", multi) when it holds more than one."""
    sets = [(f"L{layer}", [layer]) for layer in singles]
    if len(multi) > 1:
        sets.append(("multi", list(multi)))
    return sets


def without_layers(sets, missing: set) -> list[tuple[str, list[int]]]:
    """The layer sets less the layers in `missing`; empty sets and repeats of an earlier set removed."""
    out, seen = [], set()
    for name, layers in sets:
        layers = [layer for layer in layers if layer not in missing]
        if layers and tuple(layers) not in seen:
            seen.add(tuple(layers))
            out.append((name, layers))
    return out


def layer_sets(adapter, layers) -> tuple[list[tuple[str, list[int]]], bool]:
    """(layer sets, explicit): --edit-layers gives each layer alone plus all together."""
    n_layers = adapter.shape.n_layers
    if layers is None:
        return default_layer_sets(n_layers), False
    check_depth(n_layers)
    chosen = sorted({adapter.check_layer(layer) for layer in layers})
    if chosen[-1] == n_layers - 1:
        raise ConfigError(f"--edit-layers includes the last layer ({n_layers - 1}), which leaves no layer downstream to "
                          f"measure the axis-entropy correlation on (at the edited layer a cut makes it 0 by "
                          f"construction): choose layers from 0 to {n_layers - 2}")
    return named_layer_sets(chosen, chosen), True


def measured_layers(sets, n_layers: int) -> list[int]:
    """The layers whose axis is needed: every edited layer and every layer after the earliest
    set's last edited layer (the downstream layers of some set)."""
    edited = {layer for _, layers in sets for layer in layers}
    first_after = min(max(layers) for _, layers in sets) + 1
    return sorted(edited | set(range(first_after, n_layers)))


def downstream_of(layers, available, n_layers: int) -> list[int]:
    """The layers after the last of `layers` that have an axis (in `available`)."""
    return [layer for layer in range(max(layers) + 1, n_layers) if layer in available]
