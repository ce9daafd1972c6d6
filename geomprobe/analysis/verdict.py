"""The Bayesian-geometry verdict (METHODS.md section 5): three criteria, printed with their numbers.

    v = verdict(vm.pc1, vm.pc12, vm.above_shuffle_null, ko.fraction_below, af.focusing, untrained=cmps, null="...")
    print(v.summary())   # partial (2/3): value manifold ... [met]; keys ... [not met]; focusing ... [not tested]

- value manifold: PC1 > pc_threshold or PC1+PC2 > pc_threshold, i.e. PC1+PC2 > pc_threshold (the one
  statistic tested), and above the shuffle null;
- keys: mean off-diagonal |cos| < orth_threshold in at least orth_layer_fraction of the layers;
- focusing: 1 - Hbar(L-1)/Hbar(0) > focusing_threshold.
3 met: "full", 2: "partial", fewer: "absent".

With untrained null models (geomprobe.nulls, compared by geomprobe.analysis.null_comparison) each
criterion also needs its comparison, and each has a direction that can be met:
- value manifold and focusing: "above untrained" (the model's rank among the copies, or the t
  prediction test with fewer than 19 copies);
- keys, a level: the model's mean |cos| over the untrained copies' at most keys_margin (KEYS_MARGIN,
  the largest ratio of the wind tunnels, which track an exact posterior, with its interval); "not
  resolvable" (never met) where the ratio's interval and the margin's overlap. Random directions
  are already nearly orthogonal, so "more orthogonal than untrained" is unreachable; untrained
  networks meet the level, so it can only fail. The comparison with the copies is shown beside it.
An untrained network therefore scores 1/3 (keys) and "partial" needs one learned signature above
its untrained copies at p <= 0.05 (focusing's threshold is out of reach of untrained copies, which
attend uniformly): P(partial | untrained) <= 5%, P(full | untrained) about 0.
Fail closed: with nulls on, a criterion whose comparison is missing or could not be computed is
"not tested" and never met, whatever its threshold says. A criterion whose own number is None is
"not tested" too. Without nulls the verdict says it had none: a threshold alone does not tell
learned geometry from architecture, prompt length and token identity.

Focusing is specific to learned retrieval, not to inference: a model trained on a copy task, which
has no posterior to track, meets it too (tests/suites/test_specificity.py); the criterion says so. So can
the whole verdict: beside it, paper_iii (the paper's thresholds alone) and, for a whole run,
evidence_of_inference, which counts only what a model without a posterior cannot pass (sula
against the exact posterior, the ablation of the entropy axis, each against untrained copies).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass

from geomprobe.errors import AnalysisError

LABELS = {3: "full", 2: "partial"}

# The keys' level, from data (analyses/keys_margin.py, 19 untrained copies each, 2026-12-05): the ratio
# of mean key |cos| to the untrained copies' is 0.96-1.04 for untrained models, 1.31 (MiniLM), 1.51
# (Gemma 3 270M), 2.05 (SmolLM2-135M), and 3.03-5.08 for the shipped wind tunnels, which track an exact
# posterior: the margin is the largest ratio a model with the property reaches (windtunnel-bijection,
# 5.08 [5.05, 5.11]), with that interval, so that no positive control fails it.
KEYS_MARGIN = 5.1
KEYS_MARGIN_CI = (5.05, 5.11)
KEYS_MARGIN_SOURCE = ("the largest ratio of mean key |cos| to the untrained copies' among the trained models that track "
                      "an exact posterior (windtunnel-bijection 5.08 [5.05, 5.11]; the other shipped tunnels 3.03-4.17; "
                      "SmolLM2-135M 2.05, Gemma 3 270M 1.51, MiniLM 1.31; untrained models 0.96-1.04): "
                      "analyses/keys_margin.py")


@dataclass(frozen=True)
class VerdictThresholds:
    pc_threshold: float = 0.30  # PC1 or PC1+PC2 explained-variance ratio must exceed this
    orth_threshold: float = 0.20  # a layer counts as orthogonal when its mean |cos| is below this
    orth_layer_fraction: float = 0.50  # ... in at least this fraction of layers
    focusing_threshold: float = 0.30  # relative entropy reduction, layer 0 to last, must exceed this
    keys_margin: float = KEYS_MARGIN  # keys level: mean |cos| at most this times the untrained value
    keys_margin_ci: tuple | None = None  # the margin's interval: KEYS_MARGIN_CI for the default, else (m, m)

    def __post_init__(self):
        if not 0.0 <= self.orth_layer_fraction <= 1.0:
            raise AnalysisError(f"orth_layer_fraction must be in [0, 1], got {self.orth_layer_fraction}")
        if not self.keys_margin >= 1.0:
            raise AnalysisError(f"keys_margin must be >= 1 (a multiple of the untrained value), got {self.keys_margin}")
        if self.keys_margin_ci is None:
            object.__setattr__(self, "keys_margin_ci", KEYS_MARGIN_CI if self.keys_margin == KEYS_MARGIN
                               else (self.keys_margin, self.keys_margin))
        else:
            object.__setattr__(self, "keys_margin_ci", tuple(float(v) for v in self.keys_margin_ci))

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def _measured(value) -> float | None:
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


MET, NOT_MET, NOT_TESTED, NOT_RESOLVABLE = "met", "not met", "not tested", "not resolvable"
FOCUSING_SPECIFICITY = ("attention that sharpens with depth is learned retrieval, not inference: a model trained on "
                        "a copy task (no posterior to track) meets it too")


@dataclass(frozen=True)
class Verdict:
    label: str  # "full" | "partial" | "absent"
    n_met: int
    n_criteria: int
    value_manifold: dict  # met, state, pc1, pc12, above_shuffle_null, pc_threshold, passed_by, vs_untrained
    keys: dict  # met, state, fraction_below, orth_threshold, orth_layer_fraction, vs_untrained, non_inferiority
    focusing: dict  # met, state, focusing, focusing_threshold, vs_untrained, specificity
    thresholds: dict
    null: str | None = None  # what the null models were, or None when there were none
    n_not_tested: int = 0
    paper_iii: dict | None = None  # the paper's three criteria as it defines them: thresholds alone

    def to_dict(self) -> dict:
        out = dataclasses.asdict(self)
        out["summary"] = self.summary()
        return out

    def summary(self) -> str:
        from geomprobe.analysis.null_comparison import difference_text, test_text

        def mark(entry):
            state = entry.get("state") or (MET if entry["met"] else NOT_MET)
            return f"[{state}" + (f": {entry['why_not_tested']}" if state == NOT_TESTED and entry.get(
                "why_not_tested") else "") + "]"

        def number(value):
            return "n/a" if value is None else f"{value:.2f}"

        def versus(value, threshold, strict=True):
            if value is None:
                return f"n/a vs {threshold:.2f}"
            holds = value > threshold if strict else value >= threshold
            sign = (">" if strict else ">=") if holds else ("<=" if strict else "<")
            return f"{value:.2f} {sign} {threshold:.2f}"

        from geomprobe.analysis.null_comparison import status_words

        def untrained(cmp, words=None):
            if not cmp or cmp.get("status") is None:
                return ""
            if cmp.get("status") in ("not tested", "not measured"):
                return ", vs untrained not tested"
            test = test_text(cmp)
            return (f", {words or status_words(cmp['status'])} ({cmp['model']:.3f} vs {cmp['null_mean']:.3f}, difference "
                    f"{difference_text(cmp)}" + (f"; {test}" if test else "") + ")")

        vm, keys, foc = self.value_manifold, self.keys, self.focusing
        above = vm["above_shuffle_null"]
        if isinstance(above, Mapping):
            above = ", ".join(f"{name} {'yes' if flag else 'no'}" for name, flag in above.items())
        else:
            above = "n/a" if above is None else ("yes" if above else "no")
        vm_null = ""
        for name in ("pc1", "pc12"):
            cmp = (vm.get("vs_untrained") or {}).get(name)
            if cmp:
                vm_null += f"; {name.upper().replace('PC12', 'PC1+PC2')} " + untrained(cmp)[2:]
        level = keys.get("non_inferiority")
        keys_null = ""
        if level:
            ratio = level.get("ratio_to_null")
            where = {"met": "within", "not met": "not within"}.get(level.get("state"), "not resolvable against")
            low, high = level.get("ratio_ci") or (ratio, ratio)
            keys_null = (f", {where} {level['margin']:g}x untrained ({level['model']:.3f} vs untrained "
                         f"{level['null_mean']:.3f}: {ratio:.2f}x [{low:.2f}, {high:.2f}])")
            cmp = keys.get("vs_untrained") or {}
            if cmp.get("status") not in (None, "not tested", "not measured"):
                keys_null += f"; vs untrained copies: {status_words(cmp['status'])} (lower |cos| is better)"
        elif keys.get("vs_untrained"):
            keys_null = untrained(keys["vs_untrained"])
        nulls = "no untrained null (threshold only)" if self.null is None else f"nulls: {self.null}"
        tested = "" if not self.n_not_tested else f", {self.n_not_tested} not tested"
        paper = "" if not self.paper_iii else (f"; paper III's thresholds alone: {self.paper_iii['label']} "
                                               f"({self.paper_iii['n_met']}/3)")
        return (f"{self.label} ({self.n_met}/{self.n_criteria}{tested}): "
                f"value manifold PC1 {versus(vm['pc1'], vm['pc_threshold'])}, PC1+PC2 "
                f"{versus(vm['pc12'], vm['pc_threshold'])}, above shuffle null: {above}{vm_null} {mark(vm)}; "
                f"keys: {number(keys['fraction_below'])} of layers mean |cos| < {keys['orth_threshold']:.2f} "
                f"({versus(keys['fraction_below'], keys['orth_layer_fraction'], strict=False)} needed)"
                f"{keys_null} {mark(keys)} (a level random networks have: it can only fail); "
                f"focusing {versus(foc['focusing'], foc['focusing_threshold'])}{untrained(foc.get('vs_untrained'))} "
                f"{mark(foc)} (learned retrieval: a copy-task model meets it too); "
                f"{nulls}{paper}; geometry alone is not evidence of inference (a copy-task model can meet all three)")


def _untested(cmp) -> str | None:
    """Why a null comparison cannot decide a criterion (None: it can)."""
    from geomprobe.analysis.null_comparison import NOT_TESTED as CMP_NOT_TESTED

    if cmp is None:
        return "no null comparison"
    if cmp.get("status") in (CMP_NOT_TESTED, "not measured", None):
        return cmp.get("note") or "the null comparison could not be computed"
    return None


def verdict(value_manifold_pc1, value_manifold_pc12, above_shuffle_null, key_fraction_below, focusing,
            thresholds: VerdictThresholds = VerdictThresholds(), untrained: Mapping | None = None,
            null: str | None = None) -> Verdict:
    """METHODS.md section 5. above_shuffle_null: a bool, or ValueManifold.above_shuffle_null
    ({"pc1": bool, "pc12": bool}), in which case the statistic that clears pc_threshold must itself be
    above its null. key_fraction_below must have been computed with thresholds.orth_threshold
    (KeyOrthogonality.fraction_below with the same threshold). Comparisons are strict except
    "at least" for the layer fraction.

    untrained: null-model comparisons (geomprobe.analysis.null_comparison.compare_to_nulls):
    {"pc1": cmp, "pc12": cmp, "keys": cmp, "focusing": cmp}; with null given (the null models'
    description) every criterion needs its own (module docstring), and one that is missing or
    "not tested" makes its criterion not tested. null None: no nulls, thresholds only."""
    untrained = dict(untrained or {})
    with_nulls = null is not None
    pc1, pc12 = _measured(value_manifold_pc1), _measured(value_manifold_pc12)
    fraction, focusing = _measured(key_fraction_below), _measured(focusing)
    value = _value_manifold(pc1, pc12, above_shuffle_null, thresholds, untrained, with_nulls)
    keys = _keys(fraction, thresholds, untrained, with_nulls)
    focus = _focusing(focusing, thresholds, untrained, with_nulls)
    states = (value["state"], keys["state"], focus["state"])
    n_met = states.count(MET)
    return Verdict(label=LABELS.get(n_met, "absent"), n_met=n_met, n_criteria=3, n_not_tested=states.count(NOT_TESTED),
                   value_manifold=value, keys=keys, focusing=focus, thresholds=thresholds.to_dict(), null=null,
                   paper_iii=_paper_iii(pc1, pc12, above_shuffle_null, fraction, focusing, thresholds))


def _paper_iii(pc1, pc12, above_shuffle_null, fraction, focusing, thresholds: VerdictThresholds) -> dict:
    """Paper III's three criteria as the paper defines them, thresholds alone (no untrained copies):
    PC1 or PC1+PC2 above pc_threshold and above the shuffle null, mean key |cos| below orth_threshold
    in orth_layer_fraction of the layers, focusing above focusing_threshold."""
    if isinstance(above_shuffle_null, Mapping):
        above = {name: bool(flag) for name, flag in above_shuffle_null.items()}
    else:
        above = {"pc1": bool(above_shuffle_null), "pc12": bool(above_shuffle_null)}
    value = any(v is not None and v > thresholds.pc_threshold and above.get(name, False)
                for name, v in (("pc1", pc1), ("pc12", pc12)))
    keys = fraction is not None and fraction >= thresholds.orth_layer_fraction
    focus = focusing is not None and focusing > thresholds.focusing_threshold
    n_met = int(value) + int(keys) + int(focus)
    return {"label": LABELS.get(n_met, "absent"), "n_met": n_met, "value_manifold": value, "keys": keys,
            "focusing": focus, "note": "thresholds alone, as paper III defines its criteria: an untrained network "
                                       "can meet them (architecture, prompt length and token identity shape its "
                                       "activations), which the label beside it, against untrained copies, rules out"}


EVIDENCE_LEFT_OUT = {
    "geometry focusing": "a copy-task model (no posterior to track) is better than untrained too (0.93 vs 0.00)",
    "geometry keys": "a level untrained networks meet: it can only fail",
    "geometry PC1, PC1+PC2": "a copy-task model sits about 1.4 copy sd above its copies (rank 3 of 20) and was "
                             "called better than 5 copies (t, p 0.015): not specific to inference",
}
EVIDENCE_WORDS = {"evidence": "evidence of inference", "none": "no evidence of inference",
                  "not tested": "evidence of inference not tested"}


def evidence_of_inference(results: Mapping) -> dict:
    """geomprobe's evidence of inference for one run, from its suites' results ({suite: results.json}):
    one pre-declared comparison with untrained copies that a model with no posterior to track
    cannot pass, because it is defined against the exact posterior or its axis. The first that the
    run has of: sula's MAE to the Bayesian entropy; else the ablation's first cut condition (its
    primary statistic, log2 true/random, against the copies'). One test, so the level is the
    comparison's own (two counted at once gave 2 "evidence" in 24 untrained models); the run's
    other such comparisons are listed as supporting, and do not decide. The geometry statistics
    are left out, each with its reason (EVIDENCE_LEFT_OUT): a copy-task model passes them.
    "evidence" when the primary is better than untrained, "none" when it is not, "not tested" when
    the run has none (no sula or ablation against copies)."""
    from geomprobe.analysis.null_comparison import ABOVE

    candidates = []  # (label, comparison), the primary first
    sula = ((results.get("sula") or {}).get("untrained_null") or {}).get("comparisons") or {}
    for name, label in (("mae_bits", "sula MAE to H_bayes"),
                        ("abs_rho_pc1_H_bayes_given_k", "sula |rho(PC1, H_bayes) given k|")):
        candidates.append((label, sula.get(name)))
    conditions = (results.get("ablation") or {}).get("conditions") or []
    for condition in sorted(conditions, key=lambda c: c.get("op") != "cut"):  # cut first, in run order
        candidates.append((f"ablation {condition.get('id')} (log2 true/random vs copies)",
                           (condition.get("primary") or {}).get("untrained")))
    testable = [(label, cmp) for label, cmp in candidates
                if cmp and _untested(cmp) is None and not label.startswith("sula |rho")]
    supporting = [label for label, cmp in candidates if cmp and _untested(cmp) is None
                  and (not testable or label != testable[0][0]) and cmp["status"] == ABOVE]
    if not testable:
        state, primary = "not tested", None
    else:
        label, cmp = testable[0]
        state = "evidence" if cmp["status"] == ABOVE else "none"
        primary = {"comparison": label, "status": cmp["status"], "p_value": cmp.get("p_value"), "rule": cmp.get("rule")}
    return {"state": state, "words": EVIDENCE_WORDS[state], "primary": primary,
            "better_than_untrained": [primary["comparison"]] if state == "evidence" else [],
            "supporting_better_than_untrained": supporting, "left_out": dict(EVIDENCE_LEFT_OUT),
            "rule": "one pre-declared comparison with untrained copies that a model with no posterior to track cannot "
                    "pass (METHODS.md 5): sula's MAE to H_bayes, else the ablation's first cut condition"}


def _null_state(untrained: dict, with_nulls: bool, name: str) -> tuple[bool, str | None]:
    """(passes the null, why not tested)."""
    from geomprobe.analysis.null_comparison import ABOVE

    if not with_nulls:
        return True, None
    why = _untested(untrained.get(name))
    return (False, why) if why else (untrained[name]["status"] == ABOVE, None)


def _value_manifold(pc1: float | None, pc12: float | None, above_shuffle_null, thresholds: VerdictThresholds,
                    untrained: dict, with_nulls: bool) -> dict:
    """The value-manifold criterion: PC1+PC2 (PC1 without it) above pc_threshold, its shuffle null and its untrained null."""
    # "PC1 > t or PC1+PC2 > t" is PC1+PC2 > t (PC1+PC2 >= PC1), so PC1+PC2 is the one statistic tested
    # (clearing its threshold, its shuffle null, its untrained null): one test, no multiplicity; PC1's
    # comparison is reported beside it
    primary = (("pc12", pc12),) if pc12 is not None else (("pc1", pc1),)
    if isinstance(above_shuffle_null, Mapping):
        above = {name: bool(flag) for name, flag in above_shuffle_null.items()}
        level = [name for name, value in primary
                 if value is not None and value > thresholds.pc_threshold and above.get(name, False)]
    else:
        above = None if above_shuffle_null is None else bool(above_shuffle_null)
        level = [name for name, value in primary if value is not None and value > thresholds.pc_threshold] \
            if above else []
    passed_by = [name for name in level if _null_state(untrained, with_nulls, name)[0]]
    untested = [f"{name}: {_null_state(untrained, with_nulls, name)[1]}" for name in level
                if _null_state(untrained, with_nulls, name)[1]]
    if passed_by:
        state, why = MET, None
    elif untested:
        state, why = NOT_TESTED, "; ".join(untested)
    elif pc1 is None and pc12 is None:
        state, why = NOT_TESTED, "no value-manifold number"
    else:
        state, why = NOT_MET, None
    return {"met": state == MET, "state": state, "why_not_tested": why, "pc1": pc1, "pc12": pc12,
            "above_shuffle_null": above, "pc_threshold": thresholds.pc_threshold, "passed_by": passed_by,
            "vs_untrained": {k: untrained[k] for k in ("pc1", "pc12") if k in untrained} or None}


def _keys(fraction: float | None, thresholds: VerdictThresholds, untrained: dict, with_nulls: bool) -> dict:
    """The keys criterion: the level in enough layers, and within keys_margin of the untrained value."""
    from geomprobe.analysis.null_comparison import non_inferiority

    level_ok = fraction is not None and fraction >= thresholds.orth_layer_fraction
    cmp, level = untrained.get("keys"), None
    why = None if fraction is not None else "no key-orthogonality number"
    if with_nulls and why is None:
        why = _untested(cmp)
        if why is None:
            try:
                level = non_inferiority(cmp["model"], cmp.get("nulls") or [cmp["null_mean"]], thresholds.keys_margin,
                                        margin_ci=thresholds.keys_margin_ci)
                if thresholds.keys_margin == KEYS_MARGIN:
                    level["margin_source"] = KEYS_MARGIN_SOURCE
            except AnalysisError as error:
                why = str(error)
    met = why is None and level_ok and (level is None or level["met"])
    state = MET if met else (NOT_TESTED if why and (level_ok or fraction is None) else NOT_MET)
    if state == NOT_MET and why is None and level_ok and level is not None and level["state"] == NOT_RESOLVABLE:
        state = NOT_RESOLVABLE
    return {"met": met, "state": state, "why_not_tested": why if state == NOT_TESTED else None,
            "fraction_below": fraction, "orth_threshold": thresholds.orth_threshold,
            "orth_layer_fraction": thresholds.orth_layer_fraction, "vs_untrained": cmp, "non_inferiority": level}


def _focusing(focusing: float | None, thresholds: VerdictThresholds, untrained: dict, with_nulls: bool) -> dict:
    """The focusing criterion: the relative entropy reduction above focusing_threshold and its untrained null."""
    passes, why = _null_state(untrained, with_nulls, "focusing")
    if focusing is None:
        why = "no focusing number"
    met = why is None and focusing > thresholds.focusing_threshold and passes
    state = MET if met else (NOT_TESTED if why and (focusing is None or focusing > thresholds.focusing_threshold)
                             else NOT_MET)
    return {"met": met, "state": state, "why_not_tested": why if state == NOT_TESTED else None,
            "focusing": focusing, "focusing_threshold": thresholds.focusing_threshold,
            "vs_untrained": untrained.get("focusing"), "specificity": FOCUSING_SPECIFICITY}
