"""The extract suite's compare rows (geomprobe.compare): the next-token entropy and, per layer
(`attn_entropy_bits[L0]`), the head-mean final-token attention entropy, raw and normalised."""

from __future__ import annotations

from geomprobe.compare import Headline, Rows, register_compare


def read(r: dict, rows: Rows) -> dict:
    rows.estimate("next_entropy_bits", r.get("next_entropy_bits"))
    for layer in r.get("layers") or []:
        if not isinstance(layer, dict):
            continue
        at = f"L{layer.get('layer')}"
        rows.add(f"attn_entropy_bits[{at}]", layer.get("attn_entropy_bits"), layer.get("ci95"),
                 "mean over prompts of the head-mean final-token attention entropy (bits); bootstrap 95% CI",
                 r.get("n_prompts"))
        rows.add(f"attn_entropy_normalised[{at}]", layer.get("attn_entropy_normalised"), layer.get("normalised_ci95"),
                 "the same / log2(visible keys); bootstrap 95% CI", r.get("n_prompts"))
    return {}


register_compare("extract", read, headlines=(
    # a description of the model and prompts, not one of the papers' properties: no direction
    Headline("next_entropy_bits", "next-token entropy", "none", "bits", summary=False),
    Headline("attn_entropy_bits[L0]", "attention entropy L0", "none", "bits", summary=False),
))
