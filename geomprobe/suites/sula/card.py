"""The sula suite's report card: in words, whether the model updates beyond counting its examples
and orders its PC1 by the Bayesian entropy; and the SULA headline beside paper III's values
(METHODS.md section 7). Imported by geomprobe.report through geomprobe.suites.base.load_faces;
registers with geomprobe.report.cards.register_card."""

from __future__ import annotations

from geomprobe.report.cards import entropy_order_words, register_card, untrained_cells, versus_untrained
from geomprobe.report.figures import estimate, fmt, with_ci
from geomprobe.report.page import esc
from geomprobe.report.rundata import RunData


def _sentences(run: RunData) -> list[tuple[object, str]]:
    """The SULA scores against their k-only baseline, and the entropy ordering of PC1 given k, as
    (shown?, sentence)."""
    said = []

    def say(held, text):
        said.append((held, text))

    sula = run.results.get("sula") or {}
    main = (sula.get("conditions") or {}).get("main")
    if isinstance(main, dict):
        baselines = main.get("mae_baselines") or {}  # the model and the baseline scored on the same held-out half
        mae, k_only = estimate(baselines.get("model", main.get("mae_bits"))), estimate(baselines.get("k_only"))
        cmp = ((sula.get("untrained_null") or {}).get("comparisons") or {}).get("mae_bits")
        if mae is not None and k_only is not None:
            say(mae < k_only, f"Bayesian updating beyond counting examples: SULA MAE {mae:.3g} bits "
                f"{'below' if mae < k_only else 'not below'} the k-only baseline's {k_only:.3g}"
                + versus_untrained(cmp))
        order = entropy_order_words(estimate(main.get("rho_pc1_H_bayes_given_k")), "SULA PC1 (given k)",
                                    "|rho| 0.65-0.80 (raw)", "H_bayes")
        if order:
            say(*order)
    return said


def _sula_summary(run: RunData) -> str:
    """The SULA headline of a card: the main condition's MAE beside its trivial baselines, and the
    entropy axis's rho given k (the controlled figure) beside the raw one (sula/results.json)."""
    main = ((run.results.get("sula") or {}).get("conditions") or {}).get("main")
    if not isinstance(main, dict):
        return ""
    baselines = main.get("mae_baselines") or {}
    rows = [("MAE |H_model - H_bayes|", f"{with_ci(main.get('mae_bits'), '.3g')} bits",
             "0.31-0.44 bits (Phi-2 0.31, Llama-3.2-1B 0.36, Pythia-410M 0.44)")]
    if baselines:
        rows.append(("trivial baselines, held-out half: model / k only / constant / H = 0",
                     " / ".join(fmt(estimate(baselines.get(key)), ".3g") for key in ("model", "k_only", "constant",
                                                                                     "zero")) + " bits",
                     "not reported (H = 0 scores about the Llama-3.2-1B figure)"))
    rows.append(("Pearson(H_model, H_bayes)", with_ci(main.get("pearson_H_model_H_bayes"), ".4f"), "-"))
    if "rho_pc1_H_bayes_given_k" in main:
        within = main.get("rho_pc1_H_bayes_within_k") or {}
        pvalue = within.get("pvalue")
        rows += [("rho(PC1, H_bayes) given k (controlled)", with_ci(main.get("rho_pc1_H_bayes_given_k"), "+.2f"),
                  "not reported"),
                 ("rho(PC1, H_bayes) within k, pooled", with_ci(within, "+.2f")
                  + ("" if pvalue is None else f" (permutation p = {pvalue:.3g})"), "not reported")]
    rows += [("rho(PC1, H_bayes), raw (confounded with k)", with_ci(main.get("rho_pc1_H_bayes"), "+.2f"),
              "|rho| 0.65-0.80"),
             ("rho(k, PC1) (the confound)", with_ci(main.get("rho_k_pc1"), "+.2f"),
              "0.86 Pythia-410M, 0.60 Phi-2, 0.32 Llama-3.2-1B")]
    nulls = (run.results.get("sula") or {}).get("untrained_null") or {}
    for name, label in (("mae_bits", "MAE"), ("abs_rho_pc1_H_bayes_given_k", "|rho given k|")):
        cmp = (nulls.get("comparisons") or {}).get(name)
        if cmp and cmp.get("status") not in ("not measured", "not tested"):
            rows.append((f"{label} vs untrained copies ({nulls.get('description')})",
                         untrained_cells(cmp, label).strip(), "not reported"))
    body = "".join(f'<tr><td>{esc(a)}</td><td>{esc(b)}</td><td class="paper">{esc(c)}</td></tr>' for a, b, c in rows)
    return (f'<p><b>SULA</b> (main condition, {esc(main.get("n_prompts"))} prompts; 95% CIs):</p>'
            f'<table><tr><th>score</th><th>measured</th><th class="paper">paper III, LLMs (reference)</th></tr>'
            f"{body}</table>")


# "the SULA scores" and "(section 7)" keep the line break the verdict panel's caption has always had
register_card("sula", sentences=_sentences, summary=_sula_summary, gives="the SULA scores\n(section 7)")
