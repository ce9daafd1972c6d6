"""The extract suite's results: the layout of <run>/extract/results.json (checked before it is written; RESULTS_SCHEMA.md
lists it)."""

from __future__ import annotations

from typing import TypedDict

from geomprobe.analysis.estimate import Estimate
from geomprobe.suites.schema import Header

SCHEMA_VERSION = 3  # breaking changes of this layout; 3: with the header, untrained nulls and downstream ablation


class LayerEntropy(TypedDict):
    layer: int  # layer index
    attn_entropy_bits: float  # mean over prompts of the head-mean final-token attention entropy
    ci95: list  # bootstrap 95% CI of attn_entropy_bits over prompts
    attn_entropy_normalised: float  # the same divided by log2(visible keys)
    normalised_ci95: list  # its bootstrap 95% CI


class _ExtractRequired(Header):
    n_prompts: int  # prompts extracted
    layers: list[LayerEntropy]  # one entry per extracted layer
    n_tokens: dict  # {"min", "max"} prompt length in tokens


class ExtractResults(_ExtractRequired, total=False):
    next_entropy_bits: Estimate  # mean next-token entropy over prompts (causal LMs only)


NESTED = (LayerEntropy,)  # its nested types, listed in RESULTS_SCHEMA.md
