"""The mechanisms suite's results: the layout of <run>/mechanisms/results.json (checked before it is written; RESULTS_SCHEMA.md
lists it)."""

from __future__ import annotations

from geomprobe.suites.schema import Header, PromptsUsed, UntrainedNull

SCHEMA_VERSION = 3  # breaking changes of this layout; 3: with the header, untrained nulls and downstream ablation


class _MechanismsRequired(Header):
    shape: dict  # the adapter's shape
    settings: dict  # n_sequences, n_eval, n_reference, init_seeds, n_boot, seed, curves
    windtunnel: bool  # whether the model is a wind tunnel (task-based measurements)
    reference: dict  # paper statements, for comparison only


class MechanismsResults(_MechanismsRequired, total=False):
    qk_alignment: dict  # per-layer estimates of attention entropy, evidence mass, Q-K cosines
    attention_focusing: dict | None  # focusing from the rows read (None where it is undefined)
    task: dict  # wind tunnels: the task and its evidence definition
    frame: dict  # wind tunnels: layer-0 frame orthogonality against its baselines
    ablation: dict  # wind tunnels: head mean-ablation and layer-skip deltas
    two_timescale: dict  # wind tunnels: frame-precision curves and settling steps
    prompts: PromptsUsed  # other models: the prompts read
    prompt_set: dict  # wind tunnels given --prompts: the same on those prompts
    untrained_null: UntrainedNull | None  # evidence_mass, cos_evidence_minus_other (wind tunnels) and focusing


NESTED = ()  # its nested types, listed in RESULTS_SCHEMA.md
