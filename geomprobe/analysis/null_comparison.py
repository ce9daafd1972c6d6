"""A statistic of the model against the same statistic of untrained null models. numpy/scipy only.

    cmp = compare_to_nulls(pc1_of, model_matrix, [null_matrix_0, null_matrix_1, ...], higher_is_better=True)
    cmp["status"]        # "above untrained" | "indistinguishable from untrained" | "below untrained"
    cmp["p_value"], cmp["rule"], cmp["mde"]    # the test, and the smallest effect it detects half the time
    judge_against_nulls(0.41, [0.30, 0.28, ...])   # the same test on values already computed

The test (METHODS.md section 5.1). Under the null hypothesis the model is one more untrained copy,
measured the same way (each copy on its own prompt sample where the sample depends on the model:
geomprobe.suites.geometry), so the model's value and the N nulls' values are exchangeable. One
statistic then carries every source of chance the copies differ by (the initialisation, and the
prompt sample where each copy draws its own), and no second gate is needed:

- N >= 19 (with alpha 0.05): the rank rule, distribution-free and exact: p = (1 + #{nulls at least
  as good as the model}) / (N + 1); "above untrained" when p <= alpha (the model beats all 19).
- 2 <= N < 19: the rank rule cannot reach alpha, so the Gaussian rule is used: the one-sided t
  prediction test of one more copy, t = (model - mean) / (s sqrt(1 + 1/N)) with N - 1 degrees of
  freedom. Its Gaussian model of the copies is defended by measurement, not by a test of the N
  values at hand (a Shapiro-Wilk gate at N = 3-10 rejected Gaussian copies 5% of the time, and
  each rejection handed the decision to a rank rule that cannot say "above" under 19): over 24
  untrained tiny Llamas x 19 copies of their own seeds (analyses/copy_levels.py) the copies'
  standardised values of every headline statistic had skew -0.55..+0.80 and Gaussian tails, and the
  t rule kept its level at 3, 5 and 10 copies (pooled 1.8-4.8%). A strongly skewed statistic would
  not keep it (exponential copies: 9-11%); such a statistic belongs under the rank rule (19+).
- N = 1, or copies with no spread: nothing can be decided; the result says so and what would.
- Sequentially (SequentialRank, Besag and Clifford 1991): with N >= 19 planned copies, the rank
  rule says "above" only if no copy is at least as good as the model and "below" only if none is
  at least as bad. Once one copy of each kind has been seen, neither can happen whatever the
  remaining copies give: the decision ("indistinguishable") is fixed, and the suites stop building
  copies there. The decision is the one the N copies would give, so the level and the power are
  those of the full test; the p-value reported is Besag and Clifford's h / L (h copies at least as
  good after L copies), valid for the stopped sample.
"below untrained" is the mirror image, at the same alpha. Beside every decision the minimum
detectable effect (mde): the difference, in units of the nulls' standard deviation and in the
statistic's own units, that this rule detects with 50% probability when the nulls are Gaussian.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from functools import lru_cache

import numpy as np

from geomprobe.analysis.estimate import estimate
from geomprobe.errors import AnalysisError

ABOVE, SAME, BELOW = "above untrained", "indistinguishable from untrained", "below untrained"
NOT_TESTED = "not tested"  # the comparison could not be computed: its criterion is never met
# How a status reads on the console and in the report: "above" is always the favourable side (for a
# lower-is-better statistic such as key |cos| it means lower), so it is said as better / worse.
# The one vocabulary every face uses (console, report cards, captions, tables, compare, Run's repr;
# tests/project/test_vocabulary.py renders each): better / worse / indistinguishable, the
# statistic's direction said once beside it ("lower is better", direction_words).
STATUS_WORDS = {ABOVE: "better than untrained", BELOW: "worse than untrained", SAME: SAME}
SHORT_WORDS = {ABOVE: "better", BELOW: "worse", SAME: "indistinguishable"}


def status_words(status: str) -> str:
    """'better than untrained' for "above untrained", 'worse than untrained' for "below untrained",
    'indistinguishable from untrained'; any other status (not tested, not measured) as written."""
    return STATUS_WORDS.get(status, status)


def short_words(status: str) -> str:
    """status_words for a table cell: better / worse / indistinguishable."""
    return SHORT_WORDS.get(status, status)


def direction_words(higher_is_better: bool | None) -> str:
    """'higher is better' / 'lower is better' ('' when the direction is not known)."""
    return {True: "higher is better", False: "lower is better"}.get(higher_is_better, "")
ALPHA = 0.05  # one-sided, per direction
RANK_RULE_MIN = 19  # nulls the rank rule needs to reach ALPHA: 1 / (N + 1) <= 0.05


def _rank_threshold(n_nulls: int, alpha: float) -> int:
    """The most nulls that may be at least as good as the model for p <= alpha (-1: none suffices)."""
    return int(math.floor(alpha * (n_nulls + 1) + 1e-9)) - 1


@lru_cache(maxsize=256)
def mde_sd(n_nulls: int, rule: str, alpha: float = ALPHA, power: float = 0.5) -> float | None:
    """The effect (model - null mean, in null standard deviations) that `rule` ("rank" | "t")
    detects with probability `power` when the nulls are Gaussian; None when it can detect nothing."""
    from scipy import integrate, optimize, stats

    if rule == "t":
        if n_nulls < 2:
            return None
        critical = stats.t.ppf(1 - alpha, n_nulls - 1)
        scale = math.sqrt(1 + 1 / n_nulls)

        def detected(delta):
            return stats.nct.sf(critical, n_nulls - 1, delta / scale) - power
    else:
        allowed = _rank_threshold(n_nulls, alpha)
        if allowed < 0:
            return None

        def detected(delta):
            def density(z):
                return stats.norm.pdf(z) * stats.binom.cdf(allowed, n_nulls, stats.norm.sf(delta + z))
            return integrate.quad(density, -12, 12)[0] - power
    return float(optimize.brentq(detected, -5.0, 60.0))


def power_at(n_nulls: int, rule: str, effect_sd: float, alpha: float = ALPHA) -> float | None:
    """The probability that `rule` detects an effect of effect_sd null standard deviations
    (Gaussian nulls)."""
    from scipy import integrate, stats

    if rule == "t":
        if n_nulls < 2:
            return None
        return float(stats.nct.sf(stats.t.ppf(1 - alpha, n_nulls - 1), n_nulls - 1,
                                  effect_sd / math.sqrt(1 + 1 / n_nulls)))
    allowed = _rank_threshold(n_nulls, alpha)
    if allowed < 0:
        return 0.0
    return float(integrate.quad(lambda z: stats.norm.pdf(z) * stats.binom.cdf(
        allowed, n_nulls, stats.norm.sf(effect_sd + z)), -12, 12)[0])


def power_note(n_nulls: int, alpha: float = ALPHA) -> str:
    """One line for the planner: what N untrained copies can decide (Gaussian nulls assumed for the power)."""
    if n_nulls < 2:
        return f"{n_nulls} untrained copy: no spread, nothing can be decided against it"
    rule = "rank" if n_nulls >= RANK_RULE_MIN else "t"
    mde = mde_sd(n_nulls, rule, alpha)
    return (f"{n_nulls} untrained copies ({'rank rule' if rule == 'rank' else 'Gaussian t rule'}): a difference of "
            f"{mde:.2f} copy sd is detected half the time, 2 sd {100 * power_at(n_nulls, rule, 2.0, alpha):.0f}% of "
            f"the time (one-sided p <= {alpha})")


def _rule_for(nulls: np.ndarray) -> tuple[str, str]:
    """(rule, why) for these null values."""
    n = len(nulls)
    if n >= RANK_RULE_MIN:
        return "rank", f"rank among {n} untrained copies (distribution-free, exact under exchangeability)"
    if n < 2:
        return "none", ("one untrained copy cannot decide anything (no seed-to-seed spread): use 3 or more for the "
                        f"Gaussian rule, {RANK_RULE_MIN} for the distribution-free rank rule")
    if not np.std(nulls) > 0:
        return "none", f"the {n} untrained copies give one value: no spread to test against"
    return "t", (f"one-sided t prediction test of one more copy over {n} untrained copies (Gaussian copy values, "
                 f"measured to keep the level on untrained models at 3-10 copies; {RANK_RULE_MIN}+ copies give the "
                 "distribution-free rank rule)")


def judge_against_nulls(model_value: float, null_values: Sequence[float], higher_is_better: bool = True,
                        alpha: float = ALPHA, sequential: dict | None = None) -> dict:
    """The exchangeability test of the module docstring on values already computed: model_value
    one number, null_values one per untrained copy (non-finite ones are dropped and counted).
    sequential: SequentialRank.record(name) when the copies were stopped early (the rank rule over
    the planned copies, whose decision was already fixed)."""
    if sequential and sequential.get("stopped"):
        return _judge_stopped(model_value, null_values, higher_is_better, alpha, sequential)
    model_value = float(model_value)
    values = np.array([float(v) for v in null_values], dtype=np.float64)
    finite = values[np.isfinite(values)]
    if not math.isfinite(model_value) or finite.size == 0:
        raise AnalysisError("no finite model or null value to compare")
    sign = 1.0 if higher_is_better else -1.0
    model_s, nulls_s = sign * model_value, sign * finite
    n = finite.size
    rule, why = _rule_for(finite)
    mean = float(finite.mean())
    spread = float(finite.std(ddof=1)) if n >= 2 else None
    p_rank_above = float((1 + np.count_nonzero(nulls_s >= model_s)) / (n + 1))
    p_rank_below = float((1 + np.count_nonzero(nulls_s <= model_s)) / (n + 1))
    prediction, t_value = None, None
    if n >= 2 and spread:
        from scipy.stats import t as student_t

        scale = spread * math.sqrt(1 + 1 / n)
        half = float(student_t.ppf(1 - alpha, n - 1)) * scale
        prediction = [mean - half, mean + half]
        t_value = (model_value - mean) / scale
    if rule == "t":
        from scipy.stats import t as student_t

        p_above = float(student_t.sf(sign * t_value, n - 1))
        p_below = float(student_t.cdf(sign * t_value, n - 1))
    elif rule == "rank":
        p_above, p_below = p_rank_above, p_rank_below
    else:
        p_above = p_below = 1.0
    status = ABOVE if p_above <= alpha else BELOW if p_below <= alpha else SAME
    mde = mde_sd(n, rule, alpha) if rule in ("t", "rank") else None
    return {
        "model": model_value, "nulls": [float(v) for v in values], "n_nulls": int(n),
        "n_nulls_not_finite": int(values.size - n), "null_mean": mean, "null_sd": spread,
        "null_prediction_interval": prediction, "t": t_value,
        "rank": int(1 + np.count_nonzero(nulls_s >= model_s)), "of": int(n + 1),
        "rule": rule, "rule_note": why, "alpha": alpha, "higher_is_better": higher_is_better,
        "p_value": p_above, "p_value_below": p_below, "p_rank": p_rank_above,
        "mde": {"sd": mde, "value": None if mde is None or spread is None else mde * spread,
                "power": 0.5, "note": "the model - null mean difference this rule detects half the time "
                                      "(Gaussian nulls)" if mde is not None else "this rule can detect no effect"},
        "status": status,
    }


class SequentialRank:
    """Besag and Clifford's sequential rank test over `planned` copies, for several statistics at
    once (the module docstring). Per copy: add(name, value) for each watched statistic, then
    settled() says whether every decision is fixed (stop building copies). It is active only where
    the planned copies use the rank rule (N >= 19) and `enabled`; a non-finite value of the model
    or a copy switches it off (dropped copies could bring the count under 19 and change the rule).

        tracker = SequentialRank(len(specs))
        tracker.watch("pc1", model_pc1, higher_is_better=True)
        for spec, copy in ctx.nulls(specs):
            tracker.add("pc1", pc1_of(copy))
            if tracker.settled():
                break
        compare_to_nulls(..., sequential=tracker.record("pc1"))
    """

    def __init__(self, planned: int, alpha: float = ALPHA, enabled: bool = True):
        self.planned, self.alpha = int(planned), alpha
        self.allowed = _rank_threshold(self.planned, alpha)
        self.active = bool(enabled) and self.planned >= RANK_RULE_MIN and self.allowed >= 0
        self.used = 0
        self._model: dict[str, float] = {}
        self._good: dict[str, int] = {}
        self._bad: dict[str, int] = {}
        self._fixed: dict[str, dict[str, int | None]] = {}
        self._counted: dict[str, int] = {}
        self._sign: dict[str, float] = {}

    def watch(self, name: str, model_value: float, higher_is_better: bool = True) -> None:
        value = float(model_value) if model_value is not None else math.nan
        if not math.isfinite(value):
            self.active = False
        self._model[name] = value if higher_is_better else -value
        self._good[name] = self._bad[name] = self._counted[name] = 0
        self._fixed[name] = {"above": None, "below": None}
        self._sign[name] = 1.0 if higher_is_better else -1.0

    def add(self, name: str, value) -> None:
        """One more copy's value of a watched statistic (call once per copy for each)."""
        value = math.nan if value is None else float(value)
        if not math.isfinite(value):
            self.active = False
            return
        signed = self._sign[name] * value
        self._counted[name] += 1
        self.used = max(self.used, self._counted[name])
        if signed >= self._model[name]:
            self._good[name] += 1
            if self._good[name] > self.allowed and self._fixed[name]["above"] is None:
                self._fixed[name]["above"] = self._counted[name]
        if signed <= self._model[name]:
            self._bad[name] += 1
            if self._bad[name] > self.allowed and self._fixed[name]["below"] is None:
                self._fixed[name]["below"] = self._counted[name]

    def settled(self) -> bool:
        """Whether every watched decision is fixed and copies remain to be skipped."""
        if not self.active or not self._model or self.used >= self.planned:
            return False
        return all(fixed["above"] is not None and fixed["below"] is not None for fixed in self._fixed.values())

    def record(self, name: str) -> dict | None:
        """What judge_against_nulls needs to judge the stopped sample (None: not stopped early)."""
        if name not in self._model or not self.settled():
            return None
        return {"stopped": True, "planned": self.planned, "used": self.used, "allowed": self.allowed,
                "above_fixed_at": self._fixed[name]["above"], "below_fixed_at": self._fixed[name]["below"]}

    def summary(self) -> dict:
        """For the results: how many copies were planned and used, and why the rest were skipped."""
        stopped = self.settled()
        return {"planned": self.planned, "used": self.used if stopped else self.planned, "stopped_early": stopped,
                "rule": ("sequential rank test (Besag and Clifford): copies stop once no decision can change"
                         if self.active or stopped else
                         "every planned copy (the sequential stop needs the rank rule's 19+ copies and finite "
                         "values)")}


def _judge_stopped(model_value: float, null_values: Sequence[float], higher_is_better: bool, alpha: float,
                   sequential: dict) -> dict:
    """judge_against_nulls for copies stopped once the rank rule's decision over the planned copies
    was fixed: indistinguishable, with Besag and Clifford's p-values h / L for each direction."""
    values = np.array([float(v) for v in null_values], dtype=np.float64)
    n = int(values.size)
    sign = 1.0 if higher_is_better else -1.0
    model_s, nulls_s = sign * float(model_value), sign * values
    h = sequential["allowed"] + 1
    p_above = h / sequential["above_fixed_at"]
    p_below = h / sequential["below_fixed_at"]
    planned = sequential["planned"]
    mean = float(values.mean())
    spread = float(values.std(ddof=1)) if n >= 2 else None
    mde = mde_sd(planned, "rank", alpha)
    return {
        "model": float(model_value), "nulls": [float(v) for v in values], "n_nulls": n, "n_nulls_not_finite": 0,
        "null_mean": mean, "null_sd": spread, "null_prediction_interval": None, "t": None,
        "rank": int(1 + np.count_nonzero(nulls_s >= model_s)), "of": int(n + 1),
        "rule": "rank",
        "rule_note": (f"rank among {planned} planned untrained copies, stopped after {n}: copies at least as good and "
                      "at least as bad as the model had both been seen, so neither 'better' nor 'worse' could "
                      "follow (sequential rank test, Besag and Clifford; p = h / L)"),
        "alpha": alpha, "higher_is_better": higher_is_better,
        "p_value": float(p_above), "p_value_below": float(p_below), "p_rank": float(p_above),
        "mde": {"sd": mde, "value": None if mde is None or spread is None else mde * spread, "power": 0.5,
                "note": f"the model - null mean difference the rank rule over {planned} copies detects half the time "
                        "(Gaussian nulls); stopping early changes no decision, so none of its power"},
        "sequential": {key: sequential[key] for key in ("planned", "used", "above_fixed_at", "below_fixed_at")},
        "status": SAME,
    }


def not_tested(name: str, why: str) -> dict:
    """The entry of a comparison that could not be computed (its criterion is then never met)."""
    return {"statistic": name, "status": NOT_TESTED, "note": why}


def compare_to_nulls(statistic: Callable[[np.ndarray], float], model: np.ndarray, nulls: Sequence[np.ndarray],
                     higher_is_better: bool = True, unit: str = "prompts", name: str = "",
                     alpha: float = ALPHA, sequential: dict | None = None) -> dict:
    """statistic(rows) -> float for a [n_units, ...] array. model and each null: the units each was
    measured on (the same units, or each null's own sample drawn the same way: the lengths may
    differ). The statistic once on each, then judge_against_nulls (the module docstring)."""
    model = np.asarray(model)
    nulls = [np.asarray(n) for n in nulls]
    if not nulls:
        raise AnalysisError("compare_to_nulls needs at least one null model")
    if len(model) < 2 or any(len(x) < 2 for x in nulls):
        raise AnalysisError(f"model and nulls need >= 2 {unit} each, got {len(model)} and {[len(x) for x in nulls]}")
    judged = judge_against_nulls(float(statistic(model)), [_or_nan(statistic, x) for x in nulls],
                                 higher_is_better=higher_is_better, alpha=alpha, sequential=sequential)
    return {"statistic": name, **_with_difference(judged, len(model), unit)}


def _or_nan(statistic, rows) -> float:
    try:
        return float(statistic(rows))
    except (AnalysisError, ValueError, np.linalg.LinAlgError):
        return math.nan


def _with_difference(judged: dict, n_units: int, unit: str) -> dict:
    """judge_against_nulls's dict with the difference model - null mean and, with 2+ nulls, the
    interval of model minus one more untrained copy (the test's prediction interval, 90%: 5% on
    each side, as the one-sided tests at alpha 0.05)."""
    prediction = judged["null_prediction_interval"]
    model, mean = judged["model"], judged["null_mean"]
    ci = (None, None) if prediction is None else (model - prediction[1], model - prediction[0])
    how = (f"model - mean of {judged['n_nulls']} null(s); interval: model minus the 90% t prediction interval of one "
           f"more untrained copy ({unit} of each model as measured)")
    seed_check = ("one null model: no seed-to-seed spread, nothing can be decided" if judged["n_nulls"] < 2
                  else judged["rule_note"])
    return {**judged, "seed_check": seed_check, "difference": estimate(model - mean, ci, how, n_units)}


def difference_text(cmp: dict, spec: str = "+.3f") -> str:
    """'+0.104 [+0.051, +0.154]': a comparison's difference and its interval, for console and report."""
    diff = cmp.get("difference") or {}
    ci = diff.get("ci95") or [None, None]
    interval = "" if ci[0] is None else f" [{ci[0]:{spec}}, {ci[1]:{spec}}]"
    value = diff.get("value")
    return ("n/a" if value is None else f"{value:{spec}}") + interval


def test_text(cmp: dict, spec: str = ".3f") -> str:
    """'rank 1/20, p 0.050' or 't 2.91, p 0.012 (Gaussian)'; with 'mde 0.041' beside an
    indistinguishable result: how the status was decided."""
    if cmp.get("status") in (None, NOT_TESTED) or "rule" not in cmp:
        return ""
    if cmp["rule"] == "rank":
        words = f"rank {cmp['rank']}/{cmp['of']}, p {cmp['p_value']:.3f}"
    elif cmp["rule"] == "t":
        words = f"t {cmp['t']:+.2f}, p {cmp['p_value']:.3f} (Gaussian, {cmp['n_nulls']} copies)"
    else:
        words = "undecidable"
    mde = (cmp.get("mde") or {}).get("value")
    if cmp["status"] == SAME:
        words += "; detects " + ("nothing" if mde is None else f"a difference of {mde:{spec}} half the time "
                                 f"({cmp['mde']['sd']:.1f} sd)")
    return words


def comparison_text(cmp: dict, spec: str = ".3f") -> str:
    """'model 0.359 vs untrained 0.277, 0.270, 0.216; difference +0.104 [+0.051, +0.154]:
    indistinguishable from untrained (t +1.20, p 0.180; detects ...)' (or why it was not tested)."""
    if cmp.get("status") in (NOT_TESTED, "not measured"):
        return f"not tested ({cmp.get('note')})"
    values = cmp.get("nulls") or []
    nulls = ", ".join(f"{v:{spec}}" for v in values[:5]) + (f", ... ({len(values)})" if len(values) > 5 else "")
    test = test_text(cmp, spec)
    return (f"model {cmp['model']:{spec}} vs untrained {nulls}; difference {difference_text(cmp)}: "
            f"{cmp['status']}" + (f" ({test})" if test else ""))


NOT_RESOLVABLE = "not resolvable"


def non_inferiority(model_value: float, null_values: Sequence[float], margin: float,
                    alpha: float = ALPHA, margin_ci: Sequence[float] | None = None) -> dict:
    """Lower-is-better level test (key |cos|): is the model's ratio to the untrained mean within
    `margin`? The ratio model / null mean has an interval from the null mean's two-sided 1 - 2 alpha
    t interval (none with one null); the margin has its own (margin_ci, from the data it was drawn
    from; (margin, margin) when chosen by hand). "met" when the whole ratio interval lies at or below
    the margin interval's low end, "not met" when it lies above its high end, else "not resolvable":
    the two intervals overlap, so neither can be said without deciding on rounding. Never met then."""
    values = np.array([float(v) for v in null_values if v is not None and math.isfinite(float(v))])
    if values.size == 0 or not math.isfinite(float(model_value)):
        raise AnalysisError("no finite model or null value for the non-inferiority test")
    mean = float(values.mean())
    if not mean > 0:
        raise AnalysisError("the untrained copies' mean key |cos| is not positive: no ratio to take")
    low_mean = high_mean = mean
    if values.size >= 2:
        from scipy.stats import t as student_t

        half = float(student_t.ppf(1 - alpha, values.size - 1)) * float(values.std(ddof=1)) / math.sqrt(values.size)
        low_mean, high_mean = mean - half, mean + half
    model = float(model_value)
    ratio = model / mean
    ratio_ci = [model / high_mean, model / low_mean if low_mean > 0 else math.inf]
    margin_low, margin_high = (float(margin), float(margin)) if margin_ci is None else map(float, margin_ci)
    if ratio_ci[1] <= margin_low:
        state = "met"
    elif ratio_ci[0] > margin_high:
        state = "not met"
    else:
        state = NOT_RESOLVABLE
    interval = "" if margin_low == margin_high else f" [{margin_low:g}, {margin_high:g}]"
    return {"model": model, "null_mean": mean, "null_mean_ci": [low_mean, high_mean], "margin": float(margin),
            "margin_ci": [margin_low, margin_high], "limit": float(margin) * mean, "ratio_to_null": ratio,
            "ratio_ci": ratio_ci, "met": state == "met", "state": state,
            "rule": (f"model / untrained mean at most {margin:g}x{interval}: met when its interval (the untrained mean's "
                     f"{100 * (1 - 2 * alpha):.0f}% t interval) lies below the margin's, not met above it, else not "
                     "resolvable")}


def explained_share(k: int) -> Callable[[np.ndarray], float]:
    """rows [n, p] -> share of variance of the first k principal components (PC1: k = 1)."""
    from geomprobe.analysis.pca import explained_variance_ratios

    def share(rows: np.ndarray) -> float:
        return float(np.sum(explained_variance_ratios(rows.reshape(len(rows), -1))[:k]))

    return share


def focusing_of(entropy_bits: np.ndarray) -> float:
    """entropy_bits [n_prompts, n_layers, n_heads] -> 1 - Hbar(L-1) / Hbar(0) (METHODS.md section 4)."""
    hbar = np.nanmean(entropy_bits.mean(axis=2), axis=0)
    if not hbar[0] > 0:
        raise AnalysisError("attention entropy at layer 0 is 0: focusing is undefined")
    return float(1.0 - hbar[-1] / hbar[0])


def share_gain(k: int) -> Callable[[np.ndarray], float]:
    """rows [n, p + 1] whose last column is 0 (reference set) or 1 (compared set) -> the share of
    the first k principal components in set 1 minus that in set 0 (each set's own PCA)."""
    share = explained_share(k)

    def gain(rows: np.ndarray) -> float:
        group = rows[:, -1]
        return share(rows[group == 1, :-1]) - share(rows[group == 0, :-1])

    return gain


def mean_of(rows: np.ndarray) -> float:
    return float(np.mean(rows))
