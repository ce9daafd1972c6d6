"""The mechanisms suite's compare rows (geomprobe.compare): QK alignment at the last layer read
(evidence mass, cos(evidence) - cos(other)) and attention entropy at the first and last, attention
focusing, frame-token key orthogonality, the mean-ablation entropy MAEs and the settling steps."""

from __future__ import annotations

from geomprobe.compare import Headline, Rows, ci_text, is_estimate, register_compare


def read(r: dict, rows: Rows) -> dict:
    qk = r.get("qk_alignment") or {}
    metrics = qk.get("metrics") or {}
    layers = qk.get("layers") or []
    for key in ("evidence_mass", "cos_evidence_minus_other", "attn_entropy_bits"):
        entry = metrics.get(key)
        if not is_estimate(entry) or not isinstance(entry.get("value"), list) or not entry["value"]:
            continue
        cis = entry.get("ci95") or []
        picks = [(-1, key)] if key != "attn_entropy_bits" else [(0, None)] + [(-1, None)] * (len(entry["value"]) > 1)
        for index, name in picks:
            layer = layers[index] if layers else (index if index >= 0 else len(entry["value"]) - 1)
            rows.add(name or f"{key}[L{layer}]", entry["value"][index], cis[index] if len(cis) == len(entry["value"])
                     else None, f"{entry.get('method') or ''} (layer {layer})", entry.get("n"))
    rows.add("evidence_uniform_share", qk.get("evidence_uniform_share"), None,
             "share of the visible keys that are evidence: a uniform row's evidence mass")
    focus = r.get("attention_focusing") or {}
    rows.add("focusing", focus.get("focusing"), focus.get("focusing_ci95"),
             f"1 - H(L-1)/H(0) at {focus.get('rows', 'the rows read')}; "
             + ci_text(focus.get("ci_method") or {}, "focusing", "sequences").replace("CI", "bootstrap CI"),
             focus.get("n_prompts"))
    for name, group in ((r.get("frame") or {}).get("groups") or {}).items():
        baselines = group.get("baselines") or {}
        rows.add(f"frame_orth[{name}]", group.get("orth"), None, "mean |cos| of the centred layer-0 keys of the "
                 "task's frame tokens", group.get("n_tokens"))
        rows.add(f"frame_gaussian[{name}]", (baselines.get("gaussian") or {}).get("mean"), None,
                 "baseline: centred Gaussian keys, mean over draws", group.get("n_tokens"))
    ablation = r.get("ablation") or {}
    if ablation:
        n_eval = ablation.get("n_eval")
        rows.add("ablation_baseline_entropy_mae_bits", (ablation.get("baseline") or {}).get("entropy_mae_bits"),
                 None, "held-out entropy MAE against the exact posterior, unablated", n_eval)
        rows.add("ablation_context_blind_entropy_mae_bits",
                 (ablation.get("context_blind") or {}).get("entropy_mae_bits"), None,
                 "the same for a context-blind predictor", n_eval)
        for key, what in (("all_heads_delta_mae_bits", "all heads of the layer mean-ablated"),
                          ("skip_layer_delta_mae_bits", "the layer skipped")):
            for layer, value in enumerate(ablation.get(key) or []):
                rows.add(f"{key}[L{layer}]", value, None, f"change of the held-out entropy MAE, {what}", n_eval)
        first = ablation.get("layer0_heads") or {}
        rows.add("layer0_top_head_share", first.get("share_of_total"), None,
                 f"share of the summed layer-0 head MAE increases carried by head {first.get('top_head')}",
                 text=str(first.get("reading") or ""))
    settling = ((r.get("two_timescale") or {}).get("settling") or {}).get("settling_step") or {}
    for curve, step in settling.items():
        rows.add(f"settling_step[{curve}]", step, None, "checkpoint step from which the frame-precision curve stays "
                 "within the settling fraction of its final value")
    return {"evidence_mass": "evidence_mass", "cos_evidence_minus_other": "cos_evidence_minus_other",
            "focusing": "focusing"}


register_compare("mechanisms", read, headlines=(
    # the final-token query attends to the evidence tokens (above evidence_uniform_share, a uniform row's)
    Headline("evidence_mass", "evidence", "higher", "fraction"),
    Headline("cos_evidence_minus_other", "cos(evidence) - cos(other)", "higher", "cosine", summary=False),
    Headline("focusing", "focusing", "higher", "fraction", summary=False),
))
