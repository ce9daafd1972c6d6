"""The ablation suite's forward passes (package docstring, item 4): one pass with a value edit
active, prefix reuse and stacked conditions, the per-pass cache under conditions/, and the
baseline and every condition's passes of one model (the model itself, or an untrained copy).
The statistics read from them are summary.py's."""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, replace

import numpy as np

from geomprobe.analysis.ablation_metrics import AXIS_STATISTIC, axis_entropy_correlation
from geomprobe.analysis.sula_metrics import restrict_to_labels
from geomprobe.extraction import extract
from geomprobe.prompts import prompts_hash
from geomprobe.rundir import atomic_write_text

from .axis import (
    PAPER_CODE_EDITS,
    RELEASED_EDITS,
    _axes_digest,
    _main_values,
    paper_code_axes,
    released_edit,
    released_split,
)
from .controls import CONTROL_NOTE, CONTROL_VERSION, _controls_digest, control_axes, refused_for, save_controls

STACK_CPU_NOTE = ("it keeps the numbers bit for bit those of full passes: stacking 4 measured 0.84x the time per "
                  "condition on a Pythia-410M-shaped model (benchmarks/stacked_conditions.py) with float32 "
                  "results up to 3e-6 from one-by-one runs; GEOMPROBE_STACK_CONDITIONS=N stacks N")


def _one_pass(loaded, prompts, extraction_config, true_axes, edit, shared=None, released: bool = False) -> dict:
    """One forward pass over the prompts; edit = (op, parameters, {layer: axis}, positions) or None.
    Returns the labels' next-token probabilities and the axis-entropy correlation at every extracted
    layer (values projected on the true axis, re-extracted after the edit). shared: a
    geomprobe.prefix.SharedPrefix below the first edited layer (or below), so that only the blocks
    from there on run; None runs the full pass through extract. released: edit the released code's
    GPT-NeoX value split (released_edit) instead of the values."""
    from geomprobe.hooks import edit_values
    from geomprobe.interventions import make_editor

    batch_context = None
    if edit is not None:
        op, params, edit_axes, positions = edit

        def batch_context(final_index):
            if released:
                return released_edit(loaded, edit_axes, op, positions, final_index, params)
            return edit_values(loaded.adapter, sorted(edit_axes),
                               make_editor(edit_axes, op, positions, final_index, **params))

    if shared is not None:
        if edit is not None and min(edit[2]) < shared.start:
            raise ValueError(f"an edit at layer {min(edit[2])} cannot run from the prefix below layer {shared.start}")
        extraction = shared.extract(batch_context)
    else:
        extraction = extract(loaded, prompts, extraction_config, progress=False, batch_context=batch_context)
    return _pass_numbers(extraction, true_axes)


def _stacked_passes(true_axes, edits, shared, verify: bool = True) -> list[dict]:
    """_one_pass(..., edit, shared) for each of `edits`, run together (SharedPrefix.extract_stacked:
    len(edits) conditions in one call per batch). The edits differ in their axes only: the same op,
    parameters, layers and positions. verify: check the first batch against the unstacked runs
    (raises geomprobe.prefix.PrefixUnavailable on a difference)."""
    from geomprobe.interventions import make_editor

    op, params, first_axes, positions = edits[0]
    layers = sorted(first_axes)
    for other in edits[1:]:
        if (other[0], other[1], sorted(other[2]), other[3]) != (op, params, layers, positions):
            raise ValueError("stacked passes must share their op, parameters, layers and positions")
    if layers[0] < shared.start:
        raise ValueError(f"an edit at layer {layers[0]} cannot run from the prefix below layer {shared.start}")

    def editor_of(edit_axes):
        return lambda final_index: make_editor(edit_axes, op, positions, final_index, **params)

    extractions = shared.extract_stacked(layers, [editor_of(edit_axes) for _, _, edit_axes, _ in edits], verify)
    return [_pass_numbers(extraction, true_axes) for extraction in extractions]


def _pass_numbers(extraction, true_axes) -> dict:
    """A pass's JSON numbers: the labels' next-token probabilities, and the axis-entropy correlation
    at every extracted layer that has an axis (the values projected on the true axis)."""
    side = restrict_to_labels(extraction["token_probs"])
    n = len(extraction["token_probs"])
    geometry = {}
    for column, layer in enumerate(extraction.layers):
        if layer in true_axes:
            coords = true_axes[layer].project(extraction["values"][:, column].reshape(n, -1))
            geometry[str(layer)] = axis_entropy_correlation(coords, side["H_model"], true_axes[layer].sigma_u)
    return {"token_probs": extraction["token_probs"].astype(np.float64).tolist(), "axis_entropy": geometry}


def _prefix_order(plan):
    """The plan with the baseline first and the edited passes grouped by their first edited layer,
    lowest first (plan order within a group), so that one prefix state is held at a time and each
    group's is the previous one moved up (results do not depend on the order)."""
    return sorted(plan, key=lambda entry: -1 if entry[1] is None else min(entry[1][2]))


class _Prefixes:
    """Prefix reuse for the edited passes (geomprobe.prefix): one SharedPrefix below the first
    edited layer at a time, built when the first pass of its group is computed, and moved up to
    the next group's first edited layer from there (the groups come lowest first); where it
    cannot be built or moved (or its first-batch check against a full pass fails) the passes run
    in full, and settings say which was used and why."""

    def __init__(self, loaded, prompts, extraction_config):
        from geomprobe.prefix import why_not

        self.loaded, self.prompts, self.config = loaded, prompts, extraction_config
        self.why = why_not(loaded)
        self.start, self.shared = None, None
        self.groups: dict[int, dict] = {}
        self.n_layers = loaded.adapter.shape.n_layers

    def below(self, start: int | None, passes: int = 1):
        """The SharedPrefix for edits from `start` on (None: a full pass); called when `passes` passes
        are computed (0: only asked for, see counted)."""
        if start is None:
            return None
        group = self.groups.get(start)
        if group is None:
            from geomprobe.prefix import PrefixUnavailable, SharedPrefix

            shared, self.shared, self.start = self.shared, None, None
            group = self.groups[start] = {"first_edited_layer": start, "computed_passes": 0, "used": False,
                                          "why": self.why}
            if self.why is None:
                try:
                    if shared is not None and shared.start <= start:
                        shared.advance(start)
                        group["from"] = "the previous group's prefix, moved up"
                    else:
                        shared = SharedPrefix(self.loaded, self.prompts, self.config, start)
                    self.shared, self.start = shared, start
                    group.update(used=True, check=dict(shared.check))
                except PrefixUnavailable as error:
                    group["why"] = str(error)
                except Exception as error:  # noqa: BLE001 - a prefix that cannot be built runs full passes
                    group["why"] = f"{type(error).__name__}: {error}"
        group["computed_passes"] += passes
        return self.shared if group["used"] and self.start == start else None

    def counted(self, start: int, passes: int) -> None:
        """`passes` more passes computed from the prefix below `start` (after below(start, 0))."""
        self.groups[start]["computed_passes"] += passes

    def release(self):
        self.start, self.shared = None, None

    def settings(self) -> dict:
        groups = list(self.groups.values())
        used = [g for g in groups if g["used"]]
        computed = sum(g["computed_passes"] for g in groups)
        if not groups:
            note = "no edited pass was computed in this run (every one was read back)"
        elif len(used) == len(groups):
            note = ("every edited pass computed here ran blocks from its first edited layer on, from the unedited "
                    "blocks below it run once per batch (checked against a full pass on the first batch)")
        elif not used:
            note = f"full passes: {groups[0]['why']}"
        else:
            note = "; ".join(f"first edited layer {g['first_edited_layer']}: "
                             + ("prefix reuse" if g["used"] else f"full passes ({g['why']})") for g in groups)
        cost = sum(g["computed_passes"] * ((self.n_layers - g["first_edited_layer"]) if g["used"] else self.n_layers)
                   for g in groups)
        return {"prefix_reuse": bool(used), "prefix_reuse_note": note,
                "prefix_reuse_groups": groups,
                "edited_block_runs_fraction": cost / (computed * self.n_layers) if computed else None}


def stacked_conditions(loaded, run_config, options, n_prompts: int, group_size: int,
                       prefix_why: str | None, batch_planner=None) -> tuple[int, str]:
    """(m, why in one line): how many conditions of a stack group (one op and layer set: its true
    and random axes, which share their prefix state) one call runs. 1 without prefix reuse
    (prefix_why: why there is none); else GEOMPROBE_STACK_CONDITIONS=N when set; on a CPU 1
    (STACK_CPU_NOTE), and on MPS; on CUDA the planner's recommended batch (geomprobe.plan.recommend_batch_size,
    in the memory free now plus what this process's torch holds, the weights among it) over the
    rows a call holds unstacked, min(batch size, prompts). Never more than group_size."""
    from geomprobe.prefix import STACK_ENV, stack_env

    if prefix_why is not None:
        return 1, f"one condition a call: stacking runs from a prefix state, and there is none ({prefix_why})"
    given = stack_env()
    if given is not None:
        m = min(given, group_size)
        return m, f"{STACK_ENV}={given}" + (f", capped at the {group_size} conditions of a group" if given > m else "")
    device = loaded.model.get_input_embeddings().weight.device
    if device.type == "cpu":
        return 1, f"one condition a call on the CPU: {STACK_CPU_NOTE}"
    if device.type != "cuda":
        return 1, f"one condition a call on {device.type}: stacking is planned on CUDA only"
    if batch_planner is None:
        return 1, "one condition a call: no memory planner was handed to the suite (SuiteContext.batch_planner)"
    rows = max(1, min(run_config.batch_size or 8, n_prompts))
    try:
        import torch

        free, _ = torch.cuda.mem_get_info(device)
        memory = free + torch.cuda.memory_reserved(device)
        recommended = batch_planner(suites=options, run_config=replace(run_config, device=str(device)),
                                    device=str(device), device_memory=memory,
                                    device_name=torch.cuda.get_device_name(device), tokenizer=loaded.tokenizer)
    except Exception as error:  # noqa: BLE001 - no plan, no stacking
        return 1, f"one condition a call: the memory plan failed ({type(error).__name__}: {error})"
    m = max(1, min(recommended // rows, group_size))
    return m, (f"CUDA: the planner's recommended batch of {recommended} rows (geomprobe.plan.recommend_batch_size, "
               f"{memory / 2**30:.1f} GiB free or held by this process) over {rows} rows a call"
               + (f", capped at the {group_size} conditions of a group" if recommended // rows > group_size else ""))


class _Stacking:
    """Stacked conditions (geomprobe.prefix.SharedPrefix.extract_stacked): the passes of a stack
    group still to compute run `size` at a time from the group's prefix state. Each group's first
    call is checked on the first batch against the same conditions run one by one; a failed check
    or any error turns stacking off for the rest of the run (why_off says why), and those passes
    run one at a time. settings() records what ran."""

    def __init__(self, size: int, note: str):
        self.size, self.note = size, note
        self.why_off: str | None = None
        self.groups: list[dict] = []

    def run(self, group_name: str, todo: list, prefixes: _Prefixes, true_axes, write) -> list:
        """Compute what it can of `todo` ([(file name, edit, first edited layer, key)], one group's
        passes not read back) stacked, handing each pass to write(file name, key, numbers); returns
        the entries left for one-by-one passes."""
        if self.size < 2 or len(todo) < 2 or self.why_off is not None:
            return todo
        start = todo[0][2]
        record = {"group": group_name, "first_edited_layer": start, "stacked_passes": 0, "calls": 0}
        self.groups.append(record)
        shared = prefixes.below(start, passes=0)
        if shared is None:
            record["why_not"] = "no prefix state below its first edited layer (prefix_reuse_groups says why)"
            return todo
        while todo:
            chunk = todo[:self.size]
            if len(chunk) < 2:
                break
            try:
                results = _stacked_passes(true_axes, [edit for _, edit, _, _ in chunk], shared,
                                          verify=record["calls"] == 0)
            except Exception as error:  # noqa: BLE001 - stacking that fails or differs runs the passes one by one
                from geomprobe.prefix import PrefixUnavailable

                why = str(error) if isinstance(error, PrefixUnavailable) else f"{type(error).__name__}: {error}"
                self.why_off = record["fell_back"] = why
                if shared.stack_check:
                    record["check"] = dict(shared.stack_check)
                break
            if record["calls"] == 0:
                record["check"] = dict(shared.stack_check)
            for (file_name, _, _, key), numbers in zip(chunk, results):
                write(file_name, key, numbers)
            prefixes.counted(start, len(chunk))
            record["calls"] += 1
            record["stacked_passes"] += len(chunk)
            todo = todo[len(chunk):]
        return todo

    def settings(self) -> dict:
        note = self.note
        if self.why_off is not None:
            fell = next(g for g in self.groups if "fell_back" in g)
            note += (f"; from {fell['group']} on, one condition a call (stacking fell back: {self.why_off})")
        return {"stacked_conditions": self.size, "stacked_conditions_note": note, "stacked_groups": self.groups}


def _read_pass(path, key: dict) -> dict | None:
    """The pass cached at path if its fingerprint is `key` (as it reads back from JSON), else None."""
    from geomprobe.errors import GeomprobeError
    from geomprobe.readers import read_data

    if path.exists() or path.is_symlink():
        try:
            cached = read_data(path)
        except GeomprobeError as error:  # damaged: computed again, said in one line
            import warnings

            warnings.warn(f"{error.args[0].split(': delete it')[0]}; computing the pass again", stacklevel=2)
            return None
        if isinstance(cached, dict) and cached.get("fingerprint") == json.loads(json.dumps(key)):
            return cached
    return None


def _write_pass(path, key: dict, numbers: dict) -> dict:
    result = {"fingerprint": json.loads(json.dumps(key)), **numbers}
    atomic_write_text(path, json.dumps(result) + "\n")
    return result


def _cached_pass(path, key: dict, compute) -> tuple[dict, bool]:
    """(the pass, whether it was read from path): a pass whose fingerprint matches is not rerun."""
    cached = _read_pass(path, key)
    if cached is not None:
        return cached, True
    return _write_pass(path, key, compute()), False


def _stack_groups(ordered):
    """The plan entries (in _prefix_order) in runs of one op, parameters and layer set: the passes
    that differ in their axis only (the baseline alone)."""
    def same(entry):
        what = entry[1]
        return entry[0] if what is None else (what[0], json.dumps(what[1], sort_keys=True), tuple(what[2]))

    return [list(group) for _, group in itertools.groupby(ordered, key=same)]


# ----------------------------------------------------------------------------------------------
# Running the passes of one model (the model itself, or an untrained copy)


@dataclass
class PassRun:
    passes: dict
    reused: int
    n_passes: int
    settings: dict


def run_passes(loaded, prompts, extraction_config, axes, edit_base, controls, operations, sets, options, run_config,
               seed: int, conditions_dir, common: dict, progress: bool, label: str, batch_planner=None) -> PassRun:
    """The baseline and every condition's passes (true axis and n_random controls) for one model,
    each cached in conditions_dir/<name>.json under its fingerprint (common plus the pass's own
    key), with prefix reuse and stacking where they are proven (package docstring, item 4); with
    --definitions paper-code-as-released on GPT-NeoX the edits go to the released split, one
    condition a call."""
    from geomprobe.console import ProgressReport

    n_random, positions = options.n_random, options.positions
    plan = [("baseline", None, {})]
    for name, op, params in operations:
        for set_name, layers in sets:
            draws = [] if refused_for(controls, op, layers) else range(n_random)
            for draw in [None, *draws]:
                axis_name = "true" if draw is None else f"random{draw:02d}"
                plan.append((f"{name}_{set_name}_{axis_name}", (op, params, layers, draw),
                             {"op": op, **params, "layers": layers, "positions": positions,
                              "axis": axis_name, "seed": seed}))
    passes, reused = {}, 0
    released = options.definitions == "paper-code-as-released" and released_split(loaded)
    prefixes = _Prefixes(loaded, prompts, extraction_config)
    stacking = (_Stacking(1, "one condition a call: the as-released edits write into the fused query_key_value "
                             "columns, which stacked calls do not edit") if released else
                _Stacking(*stacked_conditions(loaded, run_config, options, len(prompts), 1 + n_random, prefixes.why,
                                              batch_planner)))

    def edit_of(what):
        if what is None:
            return None, None
        op, params, layers, draw = what
        edit_axes = {layer: edit_base[layer] if draw is None else
                     edit_base[layer].with_direction(controls[layer]["directions"][draw],
                                                     controls[layer]["gains"][op][draw])
                     for layer in layers}
        return (op, params, edit_axes, positions), min(layers)

    with ProgressReport(progress, f"{label}, {len(prompts)} prompts a pass", len(plan), verb="ablation",
                        unit="passes") as bar:
        def write(file_name, key, numbers):
            passes[file_name] = _write_pass(conditions_dir / f"{file_name}.json", key, numbers)
            bar.advance(1)

        for group in _stack_groups(_prefix_order(plan)):
            todo = []  # the group's passes not read back: (file name, edit, first edited layer, key)
            for file_name, what, key in group:
                key = {**common, **key}
                cached = _read_pass(conditions_dir / f"{file_name}.json", key)
                if cached is not None:
                    passes[file_name], reused = cached, reused + 1
                    bar.advance(1)
                else:
                    todo.append((file_name, *edit_of(what), key))
            todo = stacking.run(group[0][0].rsplit("_", 1)[0], todo, prefixes, axes, write)
            for file_name, edit, start, key in todo:
                passes[file_name], _ = _cached_pass(
                    conditions_dir / f"{file_name}.json", key,
                    lambda: _one_pass(loaded, prompts, extraction_config, axes, edit, prefixes.below(start), released))
                bar.advance(1)
    prefixes.release()
    return PassRun(passes, reused, len(plan), {**prefixes.settings(), **stacking.settings()})


def _edit_setup(loaded, prompts, extraction_config, axes, edited, main_extraction, config, seed, work):
    """(edit axes {layer: InterventionAxis}, controls) for the edited layers of one model: its own
    axes (geomprobe) or the released code's raw-PCA axes (paper-code), and its matched controls."""
    from geomprobe.interventions import save_axes

    paper_code = config.definitions in ("paper-code", "paper-code-as-released")
    released = config.definitions == "paper-code-as-released"
    if released:
        from geomprobe.paper_code import released_final_token_values

        main_values = {layer: released_final_token_values(loaded, prompts, layer, extraction_config.max_tokens,
                                                          extraction_config.batch_size)[0] for layer in edited}
    else:
        main_values = _main_values(main_extraction, edited)
    if paper_code:
        from geomprobe.extraction import load_extraction

        main = load_extraction(main_extraction)
        edit_base = paper_code_axes(main_values, restrict_to_labels(main["token_probs"])["H_model"])
        what = "the released value split" if released else "the SULA main values"
        save_axes(work / "edit_axis.npz", edit_base, source=np.array(f"raw-PCA PC1 of {what} ({config.definitions})"))
    else:
        edit_base = {layer: axes[layer] for layer in edited}
    controls = control_axes(loaded, prompts, extraction_config, edit_base, main_values, config.n_random, seed,
                            config.positions, paper_code, released and released_split(loaded))
    note = RELEASED_EDITS if released else PAPER_CODE_EDITS if paper_code else CONTROL_NOTE
    save_controls(work / "random_axes.npz", controls, seed, note)
    return edit_base, controls


def _common_key(prompts, extraction_config, axes, edit_base, controls, ctx, definitions: str) -> dict:
    common = {"prompts_sha256": prompts_hash(prompts), "layers": extraction_config.layers,
              "batch_size": ctx.run.batch_size, "axes": _axes_digest(axes), "tokens": extraction_config.tokens,
              "max_tokens": ctx.run.max_tokens, "axis_statistic": AXIS_STATISTIC,
              "controls": _controls_digest(controls), "control": CONTROL_VERSION}
    if definitions != "geomprobe":
        common.update(definitions=definitions, edit_axes=_axes_digest(edit_base))
    return common
