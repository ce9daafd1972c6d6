"""The Bayesian-geometry verdict (METHODS.md section 5): three criteria, printed with their numbers.

    v = verdict(vm.pc1, vm.pc12, vm.above_shuffle_null, ko.fraction_below, af.focusing)
    print(v.summary())   # partial (2/3): value manifold ... [met]; keys ... [not met]; focusing ... [met]

- value manifold: PC1 > pc_threshold or PC1+PC2 > pc_threshold, and above the shuffle null;
- keys: mean off-diagonal |cos| < orth_threshold in at least orth_layer_fraction of the layers;
- focusing: 1 - Hbar(L-1)/Hbar(0) > focusing_threshold.
3 met: "full", 2: "partial", fewer: "absent". A criterion whose number is None was not measured
and counts as not met.

With untrained null models (geomprobe.nulls, compared by geomprobe.analysis.null_comparison), a
criterion also needs its statistic to be "above untrained": the paired-bootstrap CI of model minus
null excludes 0 on the favourable side (for keys: the model's mean |cos| below the null's). Without
nulls the verdict says it had none: a threshold alone does not tell learned geometry from
architecture, prompt length and token identity.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass

from geomprobe.errors import AnalysisError

LABELS = {3: "full", 2: "partial"}


@dataclass(frozen=True)
class VerdictThresholds:
    pc_threshold: float = 0.30  # PC1 or PC1+PC2 explained-variance ratio must exceed this
    orth_threshold: float = 0.20  # a layer counts as orthogonal when its mean |cos| is below this
    orth_layer_fraction: float = 0.50  # ... in at least this fraction of layers
    focusing_threshold: float = 0.30  # relative entropy reduction, layer 0 to last, must exceed this

    def __post_init__(self):
        if not 0.0 <= self.orth_layer_fraction <= 1.0:
            raise AnalysisError(f"orth_layer_fraction must be in [0, 1], got {self.orth_layer_fraction}")

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def _measured(value) -> float | None:
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


@dataclass(frozen=True)
class Verdict:
    label: str  # "full" | "partial" | "absent"
    n_met: int
    n_criteria: int
    value_manifold: dict  # met, pc1, pc12, above_shuffle_null, pc_threshold, passed_by
    keys: dict  # met, fraction_below, orth_threshold, orth_layer_fraction
    focusing: dict  # met, focusing, focusing_threshold
    thresholds: dict
    null: str | None = None  # what the null models were, or None when there were none

    def to_dict(self) -> dict:
        out = dataclasses.asdict(self)
        out["summary"] = self.summary()
        return out

    def summary(self) -> str:
        def mark(met):
            return "[met]" if met else "[not met]"

        def number(value):
            return "n/a" if value is None else f"{value:.2f}"

        def versus(value, threshold, strict=True):
            if value is None:
                return f"n/a vs {threshold:.2f}"
            holds = value > threshold if strict else value >= threshold
            sign = (">" if strict else ">=") if holds else ("<=" if strict else "<")
            return f"{value:.2f} {sign} {threshold:.2f}"

        def untrained(entry):
            from geomprobe.analysis.null_comparison import difference_text

            cmp = entry.get("vs_untrained")
            if not cmp:
                return ""
            return (f", {cmp['status']} ({cmp['model']:.3f} vs {cmp['null_mean']:.3f}, difference "
                    f"{difference_text(cmp)})")

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
                vm_null += f"; {name.upper().replace('PC12', 'PC1+PC2')} " + untrained({"vs_untrained": cmp})[2:]
        nulls = "no untrained null (threshold only)" if self.null is None else f"nulls: {self.null}"
        return (f"{self.label} ({self.n_met}/{self.n_criteria}): "
                f"value manifold PC1 {versus(vm['pc1'], vm['pc_threshold'])}, PC1+PC2 "
                f"{versus(vm['pc12'], vm['pc_threshold'])}, above shuffle null: {above}{vm_null} {mark(vm['met'])}; "
                f"keys: {number(keys['fraction_below'])} of layers mean |cos| < {keys['orth_threshold']:.2f} "
                f"({versus(keys['fraction_below'], keys['orth_layer_fraction'], strict=False)} needed)"
                f"{untrained(keys)} {mark(keys['met'])}; "
                f"focusing {versus(foc['focusing'], foc['focusing_threshold'])}{untrained(foc)} {mark(foc['met'])}; "
                f"{nulls}")


def verdict(value_manifold_pc1, value_manifold_pc12, above_shuffle_null, key_fraction_below, focusing,
            thresholds: VerdictThresholds = VerdictThresholds(), untrained: Mapping | None = None,
            null: str | None = None) -> Verdict:
    """METHODS.md section 5. above_shuffle_null: a bool, or ValueManifold.above_shuffle_null
    ({"pc1": bool, "pc12": bool}), in which case the statistic that clears pc_threshold must itself be
    above its null. key_fraction_below must have been computed with thresholds.orth_threshold
    (KeyOrthogonality.fraction_below with the same threshold). Comparisons are strict except
    "at least" for the layer fraction.

    untrained: null-model comparisons (geomprobe.analysis.null_comparison.compare_to_nulls):
    {"pc1": cmp, "pc12": cmp, "keys": cmp, "focusing": cmp}; each criterion then also needs its
    comparison to be "above untrained". null: a description of the null models (None: none)."""
    from geomprobe.analysis.null_comparison import ABOVE

    untrained = dict(untrained or {})

    def above_null(name):
        return name not in untrained or untrained[name]["status"] == ABOVE

    pc1, pc12 = _measured(value_manifold_pc1), _measured(value_manifold_pc12)
    fraction, focusing = _measured(key_fraction_below), _measured(focusing)

    if isinstance(above_shuffle_null, Mapping):
        above = {name: bool(flag) for name, flag in above_shuffle_null.items()}
        candidates = {"pc1": pc1, "pc12": pc12}
        passed_by = [name for name, value in candidates.items()
                     if value is not None and value > thresholds.pc_threshold and above.get(name, False)]
    else:
        above = None if above_shuffle_null is None else bool(above_shuffle_null)
        passed_by = [name for name, value in (("pc1", pc1), ("pc12", pc12))
                     if value is not None and value > thresholds.pc_threshold] if above else []
    passed_by = [name for name in passed_by if above_null(name)]
    value_met = bool(passed_by)
    keys_met = fraction is not None and fraction >= thresholds.orth_layer_fraction and above_null("keys")
    focusing_met = focusing is not None and focusing > thresholds.focusing_threshold and above_null("focusing")

    n_met = int(value_met) + int(keys_met) + int(focusing_met)
    return Verdict(
        label=LABELS.get(n_met, "absent"), n_met=n_met, n_criteria=3,
        value_manifold={"met": value_met, "pc1": pc1, "pc12": pc12, "above_shuffle_null": above,
                        "pc_threshold": thresholds.pc_threshold, "passed_by": passed_by,
                        "vs_untrained": {k: untrained[k] for k in ("pc1", "pc12") if k in untrained} or None},
        keys={"met": keys_met, "fraction_below": fraction, "orth_threshold": thresholds.orth_threshold,
              "orth_layer_fraction": thresholds.orth_layer_fraction, "vs_untrained": untrained.get("keys")},
        focusing={"met": focusing_met, "focusing": focusing, "focusing_threshold": thresholds.focusing_threshold,
                  "vs_untrained": untrained.get("focusing")},
        thresholds=thresholds.to_dict(), null=null)
