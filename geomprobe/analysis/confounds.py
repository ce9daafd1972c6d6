"""Confounds of a correlation over prompts that share a covariate (METHODS.md section 7,
"Confounds"). numpy/scipy only.

In SULA, H_bayes falls with the number of examples k, and so does anything that tracks k or the
prompt length: an axis that only counts examples correlates with H_bayes over all k. These
statistics ask whether the relation holds with k (or the length in tokens) held fixed.

    per_k, pooled = within_stratum_spearman(pc1, H_bayes, k, n_perm=999, seed=0)   # pooled["pvalue"]
    rank_partial_correlation(pc1, H_bayes, strata=k)                               # given k
    rank_partial_correlation(pc1, H_bayes, covariates=[n_tokens], names=["n_tokens"])
    trivial_mae_baselines(H_bayes, H_model, k, seed=0)                             # constant, k only, 0

A stratum is one level of a discrete covariate (one k). Inputs are [n_prompts] arrays.
"""

from __future__ import annotations

import numpy as np

from geomprobe.analysis.bootstrap import (
    JACKKNIFE_GROUPS,
    PERCENTILE,
    bootstrap_mean_estimate,
    chunk_sizes,
    excludes_estimate_note,
    grouped_jackknife_rows,
    jackknife_groups,
    resample_chunks,
    stratified_bca_interval,
)
from geomprobe.analysis.estimate import Estimate, estimate
from geomprobe.errors import AnalysisError

# Values this close count as tied before ranking: H_bayes of n1 - n2 = +d and -d differ in the last
# bits (6.226280147e-07 vs 6.226280161e-07 bits at d = 8), and ranking that rounding would order
# prompts by the sign of their evidence.
TIE_RTOL, TIE_ATOL = 1e-9, 1e-12


def tie_ranks(values, axis: int = -1) -> np.ndarray:
    """Average ranks along `axis` (as scipy.stats.rankdata) with values within TIE_ATOL + TIE_RTOL |v|
    of their sorted neighbour counted as tied."""
    from scipy.stats import rankdata

    values = np.moveaxis(np.asarray(values, dtype=np.float64), axis, -1)
    order = np.argsort(values, axis=-1, kind="stable")
    ordered = np.take_along_axis(values, order, axis=-1)
    gap = np.diff(ordered, axis=-1) > TIE_ATOL + TIE_RTOL * np.abs(ordered[..., 1:])
    groups = np.concatenate([np.zeros(ordered.shape[:-1] + (1,)), np.cumsum(gap, axis=-1)], axis=-1)
    codes = np.empty_like(groups)
    np.put_along_axis(codes, order, groups, axis=-1)
    return np.moveaxis(rankdata(codes, axis=-1), -1, axis)


def _varies(values) -> bool:
    ranks = tie_ranks(values)
    return bool(np.ptp(ranks) > 0)


def _rowwise_pearson(a: np.ndarray, b: np.ndarray, atol: float = 1e-9) -> np.ndarray:
    """Pearson r of each row of a with the same row of b ([..., n] -> [...]); NaN where a row spans
    no more than atol."""
    a = a - a.mean(axis=-1, keepdims=True)
    b = b - b.mean(axis=-1, keepdims=True)
    denom = np.sqrt((a * a).sum(axis=-1) * (b * b).sum(axis=-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (a * b).sum(axis=-1) / denom
    constant = (np.ptp(a, axis=-1) <= atol) | (np.ptp(b, axis=-1) <= atol)
    return np.where(constant, np.nan, np.clip(r, -1.0, 1.0))


def _as_1d(name: str, values, n: int | None = None) -> np.ndarray:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1:
        raise AnalysisError(f"{name} must be one value per prompt, got shape {array.shape}")
    if n is not None and len(array) != n:
        raise AnalysisError(f"{name} has {len(array)} values for {n} prompts")
    if not np.isfinite(array).all():
        raise AnalysisError(f"{name} has NaN or infinite values")
    return array


# ----------------------------------------------------------------------------------------------
# Rank-partial correlation


def _design(covariate_ranks: np.ndarray, strata: np.ndarray | None) -> np.ndarray:
    """[..., n, c] regressors: an intercept, each covariate's ranks (scaled to [0, 1]) and one
    indicator per stratum but the first. covariate_ranks: [..., n, m]; strata: [..., n] integer codes."""
    n = covariate_ranks.shape[-2]
    columns = [np.ones(covariate_ranks.shape[:-1] + (1,)), covariate_ranks / n]
    if strata is not None:
        levels = np.arange(1, int(strata.max()) + 1)
        columns.append((strata[..., None] == levels).astype(np.float64))
    return np.concatenate(columns, axis=-1)


def _residualise(values: np.ndarray, design: np.ndarray) -> np.ndarray:
    """values [..., n] minus their least-squares fit on design [..., n, c] (pseudo-inverse, so a
    stratum that a resample lacks gives a zero column and no error)."""
    gram = np.einsum("...ni,...nj->...ij", design, design)
    beta = np.einsum("...ij,...j->...i", np.linalg.pinv(gram), np.einsum("...ni,...n->...i", design, values))
    return values - np.einsum("...ni,...i->...n", design, beta)


def _codes(strata) -> np.ndarray:
    """Any labels -> integer codes 0..L-1 (in sorted order of the labels)."""
    return np.unique(np.asarray(strata), return_inverse=True)[1].reshape(-1)


def _partial_r(x_ranks, y_ranks, covariate_ranks, strata) -> np.ndarray:
    design = _design(covariate_ranks, strata)
    n = x_ranks.shape[-1]
    return _rowwise_pearson(_residualise(x_ranks, design), _residualise(y_ranks, design), atol=1e-8 * n)


def partial_rho_given_strata(x, y, strata) -> float:
    """The point value of rank_partial_correlation(x, y, strata=strata), with no interval: fast
    enough to recompute inside another bootstrap. NaN when a side is constant within strata."""
    return float(_partial_r(tie_ranks(np.asarray(x, dtype=np.float64)), tie_ranks(np.asarray(y, dtype=np.float64)),
                            np.zeros((len(x), 0)), _codes(strata)))


def partial_method(given: str, n_boot: int, ci_method: str = PERCENTILE) -> str:
    """The Estimate `method` of rank_partial_correlation; ci_method: the interval made ("BCa" or
    "percentile", geomprobe.analysis.bootstrap)."""
    return (f"Spearman partial correlation given {given}: ranks of both sides residualised by least squares on "
            f"{given} (the ranks of a continuous covariate, one indicator per level of a discrete one), Pearson r "
            f"of the residuals; {ci_method} bootstrap 95% CI over prompts ({n_boot} resamples, ranks recomputed in "
            f"each); p from Student's t with n - 2 - (covariate columns) degrees of freedom")


def _with_interval(entry: Estimate, boot: np.ndarray, jackknifes: list, method_of) -> Estimate:
    """entry with its 95% interval from the finite resamples `boot`: BCa from the leave-out values
    `jackknifes` (one array per independently resampled stratum), percentile where BCa is
    undefined; method_of(ci_method) -> the method string; a note where the interval misses the
    estimate. [None, None] when no resample is finite."""
    boot = boot[np.isfinite(boot)]
    if not len(boot):
        return entry
    low, high, ci_method = stratified_bca_interval(entry["value"], boot, jackknifes)
    entry.update(ci95=[low, high], method=method_of(ci_method))
    note = excludes_estimate_note(entry["value"], low, high)
    if note:
        entry["note"] = f"{entry['note']}; {note}" if entry.get("note") else note
    return entry


def rank_partial_correlation(x, y, covariates=(), strata=None, names=None, n_boot: int = 1000,
                             seed: int = 0) -> Estimate:
    """Spearman partial correlation of x and y given covariates and/or strata, as an Estimate
    {"value", "ci95", "method", "n", "pvalue"}.

    x, y: [n]; covariates: a sequence of [n] continuous covariates (e.g. prompt length in tokens),
    entered by their ranks; strata: [n] labels of a discrete covariate (e.g. k), entered as one
    indicator per level, which is the same as subtracting each level's mean rank (a linear term in
    k would leave any non-linear function of k in the residuals). names: how the method string
    names what is held fixed (default "the covariates"). value None, with a note, when either
    side's residual is constant (e.g. y constant within every stratum)."""
    x = _as_1d("x", x)
    y = _as_1d("y", y, len(x))
    covs = [_as_1d("covariate", c, len(x)) for c in covariates]
    codes = None if strata is None else _codes(strata)
    if codes is not None and len(codes) != len(x):
        raise AnalysisError(f"strata has {len(codes)} labels for {len(x)} prompts")
    n = len(x)
    n_columns = len(covs) + (0 if codes is None else int(codes.max()))
    given = " and ".join(names) if names else "the covariates"
    entry = estimate(None, (None, None), partial_method(given, n_boot), n, pvalue=None)
    df = n - 2 - n_columns
    if df < 1:
        entry["note"] = f"undefined: {n} prompts for {n_columns} covariate columns"
        return entry
    cov_ranks = np.stack([tie_ranks(c) for c in covs], axis=-1) if covs else np.zeros((n, 0))
    value = float(_partial_r(tie_ranks(x), tie_ranks(y), cov_ranks, codes))
    if not np.isfinite(value):
        entry["note"] = "undefined: one side is constant once the covariates are removed"
        return entry
    from scipy.stats import t as student_t

    t_stat = value * np.sqrt(df / max(1.0 - value**2, 1e-300))
    entry.update(value=value, pvalue=float(2 * student_t.sf(abs(t_stat), df)))
    rng = np.random.default_rng(seed)
    boot = []
    levels = 0 if codes is None else int(codes.max()) + 1
    for idx in resample_chunks(rng, n, n_boot, 2 + len(covs) + levels):
        ranks = [tie_ranks(c[idx], axis=1) for c in covs]
        boot_cov = np.stack(ranks, axis=-1) if ranks else np.zeros(idx.shape + (0,))
        boot.append(_partial_r(tie_ranks(x[idx], axis=1), tie_ranks(y[idx], axis=1), boot_cov,
                               None if codes is None else codes[idx]))
    boot = np.concatenate(boot) if boot else np.zeros(0)
    if not np.isfinite(boot).any():
        return entry

    def left_out(kept: np.ndarray) -> np.ndarray:  # [G, m] kept prompts -> [G] (a level left out: a zero column)
        ranks = [tie_ranks(c[kept], axis=1) for c in covs]
        kept_cov = np.stack(ranks, axis=-1) if ranks else np.zeros(kept.shape + (0,))
        return _partial_r(tie_ranks(x[kept], axis=1), tie_ranks(y[kept], axis=1), kept_cov,
                          None if codes is None else codes[kept])

    return _with_interval(entry, boot, [grouped_jackknife_rows(left_out, n)],
                          lambda ci_method: partial_method(given, n_boot, ci_method))


# ----------------------------------------------------------------------------------------------
# Within-stratum Spearman with a permutation test


def within_method(n_perm: int, n_boot: int, pooled: bool, ci_method: str = PERCENTILE) -> str:
    """The Estimate `method` of within_stratum_spearman's entries; ci_method: the interval made
    ("BCa" or "percentile", geomprobe.analysis.bootstrap)."""
    what = ("mean of the within-k Spearman rhos weighted by prompts (the k where both sides vary)" if pooled
            else "Spearman rho among the prompts of this k")
    return (f"{what}; p: permutation test, x shuffled within each k ({n_perm} permutations, two-sided on |rho|); "
            f"{ci_method} bootstrap 95% CI, prompts resampled within each k ({n_boot} resamples; resamples with a "
            f"constant side skipped)")


def _strata_rhos(x_ranks: list, y_ranks: list) -> np.ndarray:
    """[b, strata]: each stratum's Pearson r of (re-)ranked x and y per replicate; NaN where constant."""
    return np.stack([_rowwise_pearson(a, b) for a, b in zip(x_ranks, y_ranks)], axis=-1)


def _pooled(rhos: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """[b, strata] -> [b]: the weighted mean over the strata that are defined in that replicate."""
    w = np.where(np.isfinite(rhos), weights, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(w.sum(-1) > 0, (np.nan_to_num(rhos) * w).sum(-1) / w.sum(-1), np.nan)


def _permutation_p(observed: float, null: np.ndarray) -> float | None:
    null = null[np.isfinite(null)]
    return float((1 + np.sum(np.abs(null) >= abs(observed) - 1e-12)) / (len(null) + 1)) if len(null) else None


def _stratum_jackknife(x: np.ndarray, y: np.ndarray, n_groups: int) -> np.ndarray:
    """[G] the Spearman rho of one stratum with each of its jackknife groups left out (NaN where,
    as in the statistic itself, fewer than 3 prompts are left or a side is then constant)."""
    def rho(kept: np.ndarray) -> np.ndarray:  # [G, m] -> [G]; tied ranks span 0, which _rowwise_pearson makes NaN
        if kept.shape[1] < 3:
            return np.full(len(kept), np.nan)
        return _rowwise_pearson(tie_ranks(x[kept], axis=1), tie_ranks(y[kept], axis=1))

    return grouped_jackknife_rows(rho, len(x), n_groups)


def within_stratum_spearman(x, y, strata, n_perm: int = 999, n_boot: int = 1000,
                            seed: int = 0) -> tuple[dict, Estimate]:
    """({stratum label: Estimate}, pooled Estimate), each {"value", "ci95", "method", "n", "pvalue"}.

    Per stratum: Spearman rho of x and y among its prompts; value None, with a note, where either
    side is constant there (e.g. H_bayes at k = 0 and k = 1) or it has fewer than 3 prompts.
    Pooled: the prompt-weighted mean of the defined strata's rhos. p-values come from shuffling x
    within each stratum (which keeps every stratum's x values, and so any relation of x with the
    strata): p = (1 + #{|rho*| >= |rho|}) / (n_perm + 1). CIs from resampling prompts within each
    stratum. The pooled value is None, with a note, when no stratum has both sides varying."""
    x = _as_1d("x", x)
    y = _as_1d("y", y, len(x))
    labels = np.asarray(strata)
    if labels.shape != x.shape:
        raise AnalysisError(f"strata has shape {labels.shape} for {len(x)} prompts")
    levels = np.unique(labels)
    groups = [np.flatnonzero(labels == level) for level in levels]
    defined = [len(rows) >= 3 and _varies(x[rows]) and _varies(y[rows]) for rows in groups]
    per_stratum = {}
    for level, rows, ok in zip(levels, groups, defined):
        entry = estimate(None, (None, None), within_method(n_perm, n_boot, pooled=False), len(rows), pvalue=None)
        if not ok:
            entry["note"] = ("undefined: fewer than 3 prompts" if len(rows) < 3 else
                             "undefined: one side is constant within this k")
        per_stratum[level.item() if hasattr(level, "item") else level] = entry
    pooled = estimate(None, (None, None), within_method(n_perm, n_boot, pooled=True), len(x), pvalue=None)
    members = [rows for rows, ok in zip(groups, defined) if ok]
    keys = [key for key, ok in zip(per_stratum, defined) if ok]
    if not members:
        pooled["note"] = "undefined: no k where both sides vary"
        return per_stratum, pooled
    weights = np.array([len(rows) for rows in members], dtype=np.float64)
    x_ranks = [tie_ranks(x[rows]) for rows in members]
    y_ranks = [tie_ranks(y[rows]) for rows in members]
    observed = _strata_rhos([r[None] for r in x_ranks], [r[None] for r in y_ranks])[0]
    rng = np.random.default_rng(seed)
    # stratum by stratum, a chunk of replicates at a time (resample_chunks: the generator's stream,
    # and so every replicate, is what drawing all of them at once gives)
    null = np.stack([np.concatenate([_rowwise_pearson(rng.permuted(np.tile(xr, (rows, 1)), axis=1), yr[None])
                                     for rows in chunk_sizes(n_perm, 2 * len(xr))] or [np.zeros(0)])
                     for xr, yr in zip(x_ranks, y_ranks)], axis=-1)
    boot = np.stack([np.concatenate([_rowwise_pearson(tie_ranks(x[rows][idx], axis=1), tie_ranks(y[rows][idx], axis=1))
                                     for idx in resample_chunks(rng, len(rows), n_boot, 2)] or [np.zeros(0)])
                     for rows in members], axis=-1)
    # BCa's leave-out values: each stratum's own jackknife (at most JACKKNIFE_GROUPS / strata groups
    # within it, and leave-one-out up to 10 prompts); the pooled value without a group of stratum s
    # has that stratum's rho and weight replaced
    per_stratum_groups = max(JACKKNIFE_GROUPS // len(members), 10)
    jackknifes = [_stratum_jackknife(x[rows], y[rows], per_stratum_groups) if n_boot else np.zeros(0)
                  for rows in members]
    pooled_jackknifes = []
    for column, (rows, jack) in enumerate(zip(members, jackknifes) if n_boot else ()):
        sizes = np.array([len(g) for g in jackknife_groups(len(rows), per_stratum_groups)], dtype=np.float64)
        rhos = np.tile(observed, (len(jack), 1))
        rhos[:, column] = jack
        kept_weights = np.tile(weights, (len(jack), 1))
        kept_weights[:, column] -= sizes
        w = np.where(np.isfinite(rhos), kept_weights, 0.0)
        with np.errstate(invalid="ignore", divide="ignore"):
            pooled_jackknifes.append(np.where(w.sum(-1) > 0, (np.nan_to_num(rhos) * w).sum(-1) / w.sum(-1), np.nan))
    for column, key in enumerate(keys):
        per_stratum[key].update(value=float(observed[column]), pvalue=_permutation_p(observed[column], null[:, column]))
        _with_interval(per_stratum[key], boot[:, column], [jackknifes[column]],
                       lambda ci_method: within_method(n_perm, n_boot, False, ci_method))
    value = float(_pooled(observed[None], weights)[0])
    pooled.update(value=value, pvalue=_permutation_p(value, _pooled(null, weights)), n=int(weights.sum()))
    _with_interval(pooled, _pooled(boot, weights), pooled_jackknifes,
                   lambda ci_method: within_method(n_perm, n_boot, True, ci_method))
    return per_stratum, pooled


# ----------------------------------------------------------------------------------------------
# Trivial MAE baselines on a held-out half


def half_split(strata, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(fit, score) index arrays: within each stratum, a seeded shuffle, floor(n/2) prompts to fit
    and the rest to score, so every stratum is in the scoring half and, with 2 or more prompts,
    in the fitting half too."""
    labels = np.asarray(strata)
    rng = np.random.default_rng(seed)
    fit, score = [], []
    for level in np.unique(labels):
        rows = rng.permutation(np.flatnonzero(labels == level))
        fit.append(rows[: len(rows) // 2])
        score.append(rows[len(rows) // 2:])
    return np.sort(np.concatenate(fit)), np.sort(np.concatenate(score))


def _mae_estimate(errors: np.ndarray, what: str, n_boot: int, seed: int) -> Estimate:
    """The mean of `errors` over the scoring half with a bootstrap CI; `what` leads the method."""
    if len(errors) < 2:
        return estimate(float(errors.mean()) if len(errors) else None, (None, None),
                        f"{what}; one scoring prompt, no interval", max(1, len(errors)))
    entry = bootstrap_mean_estimate(errors, n_boot=n_boot, seed=seed, unit="scoring prompts")
    entry["method"] = f"{what}; {entry['method']}"
    return entry


def trivial_mae_baselines(H_bayes, H_model, strata, n_boot: int = 1000, seed: int = 0) -> dict:
    """MAE |prediction - H_bayes| (bits) of predictors that know no evidence, and of the model, all
    on the same scoring half of a seeded split stratified by k (half_split); the predictors are
    fitted on the other half.

    Returns {"split": {...}, "model", "constant", "k_only", "k_only_median", "zero",
    "model_minus_k_only"}: Estimates except split. constant: the fitting half's mean H_bayes;
    k_only: its mean H_bayes per k (a k missing from it gets the constant); k_only_median: its
    median per k (the function of k alone with the least expected MAE); zero: H = 0 for every
    prompt; model_minus_k_only: the paired mean of |H_model - H_bayes| - |k_only - H_bayes| (< 0:
    the model beats counting the examples)."""
    h_bayes = _as_1d("H_bayes", H_bayes)
    h_model = _as_1d("H_model", H_model, len(h_bayes))
    labels = np.asarray(strata)
    if labels.shape != h_bayes.shape:
        raise AnalysisError(f"strata has shape {labels.shape} for {len(h_bayes)} prompts")
    fit, score = half_split(labels, seed)
    if len(fit) == 0:
        raise AnalysisError("the MAE baselines need at least 2 prompts in some k (one to fit, one to score)")
    constant = float(h_bayes[fit].mean())
    by_level = {level: h_bayes[fit][labels[fit] == level] for level in np.unique(labels[fit])}
    mean_of = {level: float(v.mean()) for level, v in by_level.items()}
    median_of = {level: float(np.median(v)) for level, v in by_level.items()}
    k_mean = np.array([mean_of.get(level, constant) for level in labels[score]])
    k_median = np.array([median_of.get(level, float(np.median(h_bayes[fit]))) for level in labels[score]])
    target = h_bayes[score]
    model_error, k_error = np.abs(h_model[score] - target), np.abs(k_mean - target)
    where = "on the scoring half of a seeded split stratified by k, fitted on the other half"
    return {
        "split": {"seed": int(seed), "n_fit": int(len(fit)), "n_score": int(len(score)), "stratified_by": "k",
                  "note": "within each k, a seeded shuffle: floor(n/2) prompts fit the baselines, the rest score "
                          "every predictor, the model included"},
        "model": _mae_estimate(model_error, "the model: |H_model - H_bayes| " + where, n_boot, seed),
        "constant": _mae_estimate(np.abs(constant - target), "constant: the fitting half's mean H_bayes, " + where,
                                  n_boot, seed),
        "k_only": _mae_estimate(k_error, "k only: the fitting half's mean H_bayes per k, " + where, n_boot, seed),
        "k_only_median": _mae_estimate(np.abs(k_median - target), "k only, MAE-optimal: the fitting half's median "
                                       "H_bayes per k, " + where, n_boot, seed),
        "zero": _mae_estimate(np.abs(target), "H = 0 for every prompt, " + where, n_boot, seed),
        "model_minus_k_only": _mae_estimate(model_error - k_error, "paired difference |H_model - H_bayes| - "
                                            "|k_only - H_bayes| " + where, n_boot, seed),
    }
