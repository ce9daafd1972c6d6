"""The domain suite's compare rows (geomprobe.compare): PC1 and PC1+PC2 of each prompt set
(`pc12[math]`) and each restricted set's gain over the mixed one (`pc12_gain[math]`)."""

from __future__ import annotations

from geomprobe.compare import Headline, Rows, ci_text, register_compare


def read(r: dict, rows: Rows) -> dict:
    mapping = {}
    for label, entry in (r.get("sets") or {}).items():
        if not isinstance(entry, dict):
            continue
        methods = entry.get("ci_method") or {}
        for key in ("pc1", "pc12"):
            rows.add(f"{key}[{label}]", entry.get(key), entry.get(f"{key}_ci95"),
                     f"{key.upper()} share of the {label} set, layer {r.get('layer')} {r.get('readout', '')}; "
                     + ci_text(methods, key), entry.get("n_prompts", entry.get("n")))
        for key, gain in (entry.get("gain_over_mixed") or {}).items():
            rows.estimate(f"{key}_gain[{label}]", gain)
        mapping[f"pc12_gain_{label}"] = f"pc12_gain[{label}]"
    return mapping


register_compare("domain", read, headlines=(
    # one domain's prompts lie closer to a plane than the mixed set's (paper III: mathematics)
    Headline("pc12_gain[math]", "math gain", "higher", "fraction"),
    Headline("pc12[mixed]", "PC1+PC2 mixed", "higher", "fraction", summary=False),
    Headline("pc12[math]", "PC1+PC2 math", "higher", "fraction", summary=False),
))
