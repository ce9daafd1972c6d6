"""Value manifold: PCA of standardised final-token values (METHODS.md section 2). numpy/scipy only.

    vm = value_manifold(values[:, -1].reshape(n_prompts, -1), entropy_bits=next_entropy_bits)
    vm.pc12, vm.pc12_ci95, vm.shuffle_null["pc12"], vm.above_shuffle_null["pc12"]
    json.dumps(vm.to_dict())

Statistics of the covariance eigenvalues lambda_1 >= lambda_2 >= ... of the standardised matrix:
    pc1  = lambda_1 / sum(lambda)
    pc12 = (lambda_1 + lambda_2) / sum(lambda)
    pr   = sum(lambda)^2 / sum(lambda^2)        (participation ratio, 1 <= pr <= rank)
Confidence intervals (ci="bootstrap", the default): bootstrap over prompts (rows), re-standardised
in every resample, BCa where it works and percentile otherwise (geomprobe.analysis.bootstrap.
bootstrap_rows, i.e. scipy.stats.bootstrap); `ci_method` says which and `ci_contains_estimate`
whether each interval contains its own estimate, per statistic. Caveat: with n prompts << p
columns a resample's duplicated rows make the spectrum less isotropic, so the bootstrap
distribution of pc1 and pc12 sits above the estimate and that of pr below it, by up to several
bootstrap standard deviations. BCa's bias correction helps when the shift is small; when it is
large every bootstrap interval can exclude its estimate (all-MiniLM-L6-v2, 60 demo prompts: pr
15.6, percentile CI [9.8, 13.7]; an i.i.d. Gaussian 75 x 4096 matrix: pc1 0.017, CI about
[0.04, 0.07]). ci="jackknife" gives estimate -/+ 1.96 jackknife standard errors instead (leave one
prompt out: no duplicated rows); compare pc1 with the nulls, not with the ends of its CI.
Nulls: i.i.d. Gaussian matrices of the same n x p_kept shape, and every column permuted
independently across prompts (parallel analysis). Both go through the same standardisation.
"""

from __future__ import annotations

import copy
import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from geomprobe.analysis.bootstrap import bootstrap_rows, jackknife_interval
from geomprobe.analysis.pca import standardise
from geomprobe.errors import AnalysisError, NumericalError

SPECTRUM_LENGTH = 20  # eigenvalue ratios kept for plots
STATISTICS = ("pc1", "pc12", "pr")
CI_KINDS = ("bootstrap", "jackknife")


def _float_or_none(value) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


def _finite_matrix(matrix, what: str) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float64)
    if not np.isfinite(matrix).all():
        bad = int((~np.isfinite(matrix)).sum())
        raise NumericalError(f"NaN in activations: {what} has {bad} NaN or infinite entries; "
                             "re-extract in float32 or check the model for overflow")
    return matrix


def covariance_eigenvalues(z: np.ndarray) -> np.ndarray:
    """Eigenvalues (up to a common factor, largest first) of the covariance of a centred [n, p] matrix.
    Uses the n x n Gram matrix when p > n (same non-zero eigenvalues, much cheaper for n << p)."""
    n, p = z.shape
    gram = z @ z.T if p > n else z.T @ z
    eig = np.linalg.eigvalsh(gram)[::-1]
    return np.clip(eig, 0.0, None)


def spectrum_statistics(eig: np.ndarray) -> dict[str, float]:
    """pc1, pc12 and participation ratio from eigenvalues sorted largest first."""
    total = eig.sum()
    if total <= 0:
        return {"pc1": math.nan, "pc12": math.nan, "pr": math.nan}
    return {"pc1": float(eig[0] / total), "pc12": float(eig[:2].sum() / total),
            "pr": float(total**2 / (eig**2).sum())}


def _standardised_eigenvalues(matrix: np.ndarray) -> np.ndarray:
    return covariance_eigenvalues(standardise(matrix)[0])


def resample_eigenvalues(z: np.ndarray, rows: np.ndarray) -> np.ndarray | None:
    """Eigenvalues of standardise(X[rows]) for a bootstrap resample `rows`, given z = standardise(X).
    Same result as re-standardising the resample, about 3x faster: standardising is affine per
    column, so z can stand in for X; and a row drawn w times is one row scaled by sqrt(w), which
    leaves the non-zero eigenvalues unchanged. Columns constant within the resample are dropped
    (as standardise does); None if no column varies (e.g. every draw the same prompt)."""
    n = z.shape[0]
    counts = np.bincount(rows, minlength=n).astype(np.float64)
    unique = np.flatnonzero(counts)
    weights, drawn = counts[unique], z[unique]
    mean = weights @ drawn / len(rows)
    var = weights @ (drawn * drawn) / len(rows) - mean * mean
    keep = var > 1e-10  # z has unit variance over all prompts: anything this small is rounding
    if not keep.any():
        return None
    scaled = (drawn[:, keep] - mean[keep]) * (np.sqrt(weights)[:, None] / np.sqrt(var[keep]))
    return covariance_eigenvalues(scaled)


DENSE_SPECTRUM_MAX = 320  # above this size, spectra of one matrix are summarised from its top two eigenvalues


def symmetric_statistics(matrix: np.ndarray, start: np.ndarray | None = None) -> np.ndarray:
    """[pc1, pc12, pr] of the eigenvalues of a symmetric positive semi-definite matrix (a covariance
    or a Gram matrix, any common factor): from the full spectrum up to DENSE_SPECTRUM_MAX rows, else
    from the top two eigenvalues (Lanczos, to machine precision, started from `start` if given) with
    sum(lambda) = trace and sum(lambda^2) = the squared Frobenius norm, which are exact."""
    size = matrix.shape[0]
    if size <= DENSE_SPECTRUM_MAX:
        stats = spectrum_statistics(np.clip(np.linalg.eigvalsh(matrix)[::-1], 0.0, None))
        return np.array([stats[name] for name in STATISTICS])
    from scipy.sparse.linalg import eigsh

    top = np.sort(eigsh(matrix, k=2, which="LA", v0=start, tol=0, return_eigenvectors=False))[::-1]
    total = float(np.trace(matrix))
    if total <= 0:
        return np.full(len(STATISTICS), np.nan)
    return np.array([top[0] / total, top.sum() / total, total**2 / float((matrix * matrix).sum())])


LANCZOS_VECTORS = 12  # eigsh's ncv for the top two eigenvalues, started near the answer (measured fastest)


def _downdated_statistics(gram: np.ndarray, square: np.ndarray, a: np.ndarray, b: np.ndarray, d: np.ndarray,
                          start: np.ndarray) -> np.ndarray:
    """[pc1, pc12, pr] of C = D (G - a a' - b b') D, D = diag(d), without forming C: its top two
    eigenvalues by Lanczos on products C v = d * (G (d v) - a a'(d v) - b b'(d v)), its trace
    sum d^2 (diag G - a^2 - b^2), and its squared Frobenius norm, expanded with u = d^2 and
    H = G * G (elementwise, `square`) as u'Hu - 2 (ua)'G(ua) - 2 (ub)'G(ub) + (u.a^2)^2
    + 2 (u.ab)^2 + (u.b^2)^2. A zero d_j drops column j exactly."""
    from scipy.sparse.linalg import LinearOperator, eigsh

    p = len(d)

    def product(v):
        dv = d * np.ravel(v)
        return d * (gram @ dv - a * (a @ dv) - b * (b @ dv))

    operator = LinearOperator((p, p), matvec=product, dtype=np.float64)
    u = d * d
    total = float(u @ (np.diag(gram) - a * a - b * b))
    if total <= 0:
        return np.full(len(STATISTICS), np.nan)
    ua, ub = u * a, u * b
    frobenius = float(u @ square @ u - 2 * ua @ gram @ ua - 2 * ub @ gram @ ub
                      + (ua @ a) ** 2 + 2 * (ua @ b) ** 2 + (ub @ b) ** 2)
    top = np.sort(eigsh(operator, k=2, which="LA", v0=start, tol=0, ncv=min(LANCZOS_VECTORS, p),
                        return_eigenvectors=False))[::-1]
    return np.array([top[0] / total, top.sum() / total, total**2 / frobenius])


def _spectrum_ns(size: int) -> float:
    """Measured nanoseconds (one core) for the top two eigenvalues of a size x size matrix: a dense
    decomposition up to DENSE_SPECTRUM_MAX, else Lanczos, whose products with vectors dominate."""
    return 0.22 * size**3 if size <= DENSE_SPECTRUM_MAX else 8.0 * size * size


def _row_space_cheaper(n: int, p: int) -> bool:
    """Whether re-fitting each leave-one-out spectrum from its n - 1 rows (an n x n Gram matrix by a
    matrix product, about 0.05 ns per multiply-add) costs less than the downdate of the p x p
    cross-product (_downdated_statistics, or a formed matrix up to DENSE_SPECTRUM_MAX). Either
    gives the same non-zero eigenvalues; the constants were measured with
    benchmarks/value_manifold_cost.py."""
    return 0.05 * n * n * p + _spectrum_ns(n) < 4.0 * p * p + _spectrum_ns(p)


def leave_one_out_route(n: int, p: int) -> str:
    """How leave_one_out_statistics computes an n x p jackknife: "row space" (each spectrum re-fitted
    from its rows), "cross-product, formed" (each downdated p x p matrix formed, full spectrum) or
    "cross-product, products" (above DENSE_SPECTRUM_MAX columns: never formed)."""
    if _row_space_cheaper(n, p):
        return "row space"
    return "cross-product, formed" if p <= DENSE_SPECTRUM_MAX else "cross-product, products"


def leave_one_out_statistics(z: np.ndarray) -> np.ndarray:
    """[n, 3]: [pc1, pc12, pr] of standardise(X without row i) for each row i, given z = standardise(X);
    row i equals _resampled_statistics(z, np.delete(np.arange(n), i)) to rounding (tested to 1e-9).

    Re-fitting each leave-one-out spectrum from its rows costs about n p^2 + p^3 (n^2 p + n^3 in the
    row space when p > n), so the jackknife grows like n^2 p^2. Here the p x p cross-product G = z'z
    is formed once: leaving out row i re-centres the columns by m = (s1 - z_i) / (n - 1) and rescales
    them by 1 / sd_i, so its covariance is D_i (G - z_i z_i' - (n - 1) m m') D_i, a function of G in
    O(p^2) whatever n is (formed for a dense spectrum; above DENSE_SPECTRUM_MAX columns only
    multiplied by vectors: _downdated_statistics). Only where re-fitting in the row space is cheaper
    (few rows, many columns: _row_space_cheaper) is each spectrum re-fitted from its rows. Large
    matrices give only their top two eigenvalues, started from the full sample's leading eigenvector."""
    n, p = z.shape
    out = np.full((n, len(STATISTICS)), np.nan)
    s1, s2 = z.sum(axis=0), (z * z).sum(axis=0)
    route = leave_one_out_route(n, p)
    row_space = route == "row space"
    gram = z @ z.T if row_space else z.T @ z
    leading = np.linalg.eigh(gram)[1][:, -1] if gram.shape[0] > DENSE_SPECTRUM_MAX else None
    square = gram * gram if route == "cross-product, products" else None
    for row in range(n):
        zi = z[row]
        mean = (s1 - zi) / (n - 1)
        var = (s2 - zi * zi) / (n - 1) - mean * mean
        keep = var > 1e-10  # as resample_eigenvalues: a column constant without row i is dropped
        if not keep.any():
            continue
        if square is not None:
            scale = np.zeros(p)
            scale[keep] = 1.0 / np.sqrt(var[keep])
            out[row] = _downdated_statistics(gram, square, zi, np.sqrt(n - 1) * mean, scale, leading)
            continue
        scale = 1.0 / np.sqrt(var[keep])
        if row_space:
            others = np.delete(np.arange(n), row)
            scaled = (z[np.ix_(others, keep)] - mean[keep]) * scale
            matrix, start = scaled @ scaled.T, None if leading is None else leading[others]
        else:
            cross = gram - np.outer(zi, zi) - (n - 1) * np.outer(mean, mean)
            if not keep.all():
                cross = cross[np.ix_(keep, keep)]
            matrix, start = cross * scale[:, None] * scale[None, :], None
        out[row] = symmetric_statistics(matrix, start)
    return out


def _null_summary(draws: list[dict[str, float]], spectra: list[np.ndarray], kind: str, shape) -> dict:
    summary = {"kind": kind, "n_draws": len(draws), "shape": [int(s) for s in shape]}
    for name in STATISTICS:
        values = np.array([d[name] for d in draws])
        low, median, high = np.nanpercentile(values, [2.5, 50, 97.5])
        summary[name] = {"median": float(median), "low": float(low), "high": float(high)}
    length = min(len(s) for s in spectra)
    summary["spectrum_median"] = [float(v) for v in np.median(np.stack([s[:length] for s in spectra]), axis=0)]
    return summary


def _ratios(eig: np.ndarray) -> np.ndarray:
    return eig[:SPECTRUM_LENGTH] / eig.sum()


def gaussian_null(n: int, p: int, n_null: int = 200, seed: int | np.random.SeedSequence = 0) -> dict:
    """pc1/pc12/pr of standardised i.i.d. Gaussian [n, p] matrices: median and 2.5/97.5 percentiles,
    plus the median top-20 spectrum (ratios). It depends only on the shape and the seed, so it is
    drawn once per (n, p, n_null, seed) in a process (every layer of a profile shares it)."""
    if isinstance(seed, np.random.SeedSequence):
        key = (n, p, n_null, repr(seed.entropy), tuple(seed.spawn_key), seed.pool_size)
    else:
        key = (n, p, n_null, repr(int(seed)), (), None)
    return copy.deepcopy(_gaussian_null_once(key, seed))


_GAUSSIAN_NULLS: dict = {}


def _gaussian_null_once(key, seed) -> dict:
    if key not in _GAUSSIAN_NULLS:
        if len(_GAUSSIAN_NULLS) >= 64:
            _GAUSSIAN_NULLS.pop(next(iter(_GAUSSIAN_NULLS)))
        _GAUSSIAN_NULLS[key] = _draw_gaussian_null(*key[:3], seed)
    return _GAUSSIAN_NULLS[key]


def _draw_gaussian_null(n: int, p: int, n_null: int, seed) -> dict:
    rng = np.random.default_rng(seed)
    draws, spectra = [], []
    for _ in range(n_null):
        eig = _standardised_eigenvalues(rng.standard_normal((n, p)))
        draws.append(spectrum_statistics(eig))
        spectra.append(_ratios(eig))
    return _null_summary(draws, spectra, "gaussian", (n, p))


def shuffle_null(z: np.ndarray, n_null: int = 200, seed: int | np.random.SeedSequence = 0) -> dict:
    """Same summary for a standardised matrix whose columns are permuted independently across rows.
    Permuting keeps each column's mean and variance, so z needs no re-standardising."""
    rng = np.random.default_rng(seed)
    draws, spectra = [], []
    for _ in range(n_null):
        eig = covariance_eigenvalues(rng.permuted(z, axis=0))
        draws.append(spectrum_statistics(eig))
        spectra.append(_ratios(eig))
    return _null_summary(draws, spectra, "shuffle", z.shape)


@dataclass(frozen=True)
class ValueManifold:
    """METHODS.md section 2 for one matrix (one layer). CIs are [low, high], 95%, over prompts;
    ci_method per statistic: "BCa" or "percentile" (bootstrap), "jackknife", or "none"."""

    n_prompts: int
    n_columns: int
    n_dropped_columns: int  # zero-variance columns removed before PCA
    pc1: float
    pc12: float
    pr: float
    pc1_ci95: list
    pc12_ci95: list
    pr_ci95: list
    ci_method: dict  # {"pc1": "BCa", "pc12": "BCa", "pr": "percentile"}: how each interval was made
    ci_contains_estimate: dict  # {"pc1": True, ...}; False: the interval excludes its own estimate (None: no CI)
    spectrum: list  # top-20 explained-variance ratios, largest first
    gaussian_null: dict  # {"pc1": {"median","low","high"}, "pc12": ..., "pr": ..., "spectrum_median", ...}
    shuffle_null: dict
    above_shuffle_null: dict  # {"pc1": bool, "pc12": bool}: estimate > the null's 97.5th percentile
    above_gaussian_null: dict
    pc1_coords: list  # per prompt, sign as described by pc1_sign
    pc2_coords: list | None
    pc1_sign: str
    rho_pc1_entropy_raw: float | None  # Spearman rho with the SVD's arbitrary sign
    rho_pc1_entropy: float | None  # after orienting PC1 so that rho >= 0
    abs_rho_pc1_entropy: float | None
    rho_pc1_entropy_pvalue: float | None
    n_boot: int
    n_null: int
    seed: int

    def to_dict(self, compact: bool = False) -> dict:
        """JSON-ready plain Python; compact=True leaves out the per-prompt coordinates (layer profiles)."""
        out = dataclasses.asdict(self)
        if compact:
            del out["pc1_coords"], out["pc2_coords"]
        return out


def _check_rows(n: int) -> None:
    if n < 3:
        raise AnalysisError(f"the value manifold needs at least 3 prompts (rows), got {n}")


def _principal_coordinates(z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Prompt coordinates [n, 2] on PC1 and PC2 (or [n, 1]) and the PC loadings [p, 2];
    each PC's sign fixed so that its largest-magnitude coordinate is positive."""
    u, s, vt = np.linalg.svd(z, full_matrices=False)
    k = min(2, len(s))
    coords, loadings = u[:, :k] * s[:k], vt[:k].T.copy()
    for j in range(k):
        if coords[np.argmax(np.abs(coords[:, j])), j] < 0:
            coords[:, j] *= -1
            loadings[:, j] *= -1
    return coords, loadings


def _orient(coords: np.ndarray, entropy_bits) -> tuple[np.ndarray, dict]:
    """Spearman rho(PC1, entropy) as computed, then PC1 flipped so that rho >= 0 (METHODS.md 2.5)."""
    fields = {"pc1_sign": "largest-magnitude PC1 coordinate positive (no entropy given)",
              "rho_pc1_entropy_raw": None, "rho_pc1_entropy": None, "abs_rho_pc1_entropy": None,
              "rho_pc1_entropy_pvalue": None}
    if entropy_bits is None:
        return coords, fields
    from scipy.stats import spearmanr

    rho, pvalue = spearmanr(coords[:, 0], entropy_bits)
    rho = float(rho)
    if rho < 0:
        coords = coords.copy()
        coords[:, 0] *= -1
    fields.update(
        pc1_sign="oriented so that Spearman rho(PC1, entropy) >= 0" + (" (flipped)" if rho < 0 else ""),
        rho_pc1_entropy_raw=_float_or_none(rho), rho_pc1_entropy=_float_or_none(abs(rho)),
        abs_rho_pc1_entropy=_float_or_none(abs(rho)), rho_pc1_entropy_pvalue=_float_or_none(pvalue))
    return coords, fields


def _entropy_vector(entropy_bits, n: int) -> np.ndarray | None:
    if entropy_bits is None:
        return None
    entropy_bits = np.asarray(entropy_bits, dtype=np.float64).reshape(-1)
    if entropy_bits.shape[0] != n:
        raise AnalysisError(f"entropy_bits has {entropy_bits.shape[0]} values for {n} prompts")
    if not np.isfinite(entropy_bits).all():
        raise NumericalError("NaN in entropies: entropy_bits has NaN or infinite values")
    return entropy_bits


def _resampled_statistics(z: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """[pc1, pc12, pr] of the resample `rows` of the standardised matrix z (NaN if no column varies)."""
    eig = resample_eigenvalues(z, rows)
    if eig is None:
        return np.full(len(STATISTICS), np.nan)
    stats = spectrum_statistics(eig)
    return np.array([stats[name] for name in STATISTICS])


def _intervals(z: np.ndarray, ci: str, n_boot: int, rng: np.random.Generator) -> tuple[dict, dict]:
    """95% CIs of pc1, pc12 and pr over the rows of z ({name: [low, high]}) and the method of each
    ({name: "BCa" | "percentile" | "jackknife" | "none"}). ci="bootstrap": n_boot resamples (BCa's
    jackknife re-fits the n leave-one-out spectra; resamples whose columns are all constant count as
    undefined, so percentile skips them). ci="jackknife": the n leave-one-out spectra only."""
    n = z.shape[0]
    if ci == "jackknife":
        estimates = _resampled_statistics(z, np.arange(n))
        leave_one_out = leave_one_out_statistics(z)
        intervals = [jackknife_interval(value, column) for value, column in zip(estimates, leave_one_out.T)]
    elif n_boot < 1:
        intervals = [(None, None, "none")] * len(STATISTICS)
    else:
        intervals = bootstrap_rows(lambda rows: _resampled_statistics(z, rows), n, n_boot, rng)
    return ({name: [low, high] for name, (low, high, _) in zip(STATISTICS, intervals)},
            {name: method for name, (_, _, method) in zip(STATISTICS, intervals)})


def _contains(interval: list, value: float) -> bool | None:
    low, high = interval
    return None if low is None else bool(low <= value <= high)


def value_manifold(matrix, entropy_bits=None, n_boot: int = 1000, n_null: int = 200, seed: int = 0,
                   ci: str = "bootstrap") -> ValueManifold:
    """matrix: [n_prompts, p] final-token values of one layer, heads concatenated.
    entropy_bits: optional [n_prompts] next-token entropies for the PC1 alignment (section 2.5).
    ci: "bootstrap" (BCa, else percentile) or "jackknife" intervals (see the module docstring).
    Every random step derives from `seed` (bootstrap, Gaussian null and shuffle null each get their own stream)."""
    if ci not in CI_KINDS:
        raise AnalysisError(f"unknown interval kind ci={ci!r}: choose one of {', '.join(CI_KINDS)}")
    matrix = _finite_matrix(matrix, "the value matrix")
    if matrix.ndim != 2:
        raise AnalysisError(f"value_manifold expects a [n_prompts, p] matrix, got shape {matrix.shape}")
    n = matrix.shape[0]
    _check_rows(n)
    entropy_bits = _entropy_vector(entropy_bits, n)
    z, n_dropped = standardise(matrix)
    if z.shape[1] == 0:
        raise AnalysisError(f"all {matrix.shape[1]} columns have zero variance across prompts: nothing to analyse")
    eig = covariance_eigenvalues(z)
    stats = spectrum_statistics(eig)

    boot_seed, gauss_seed, shuffle_seed = np.random.SeedSequence(seed).spawn(3)
    cis, ci_method = _intervals(z, ci, n_boot, np.random.default_rng(boot_seed))

    gauss = gaussian_null(n, z.shape[1], n_null, seed=gauss_seed)
    shuffle = shuffle_null(z, n_null, seed=shuffle_seed)

    coords, _ = _principal_coordinates(z)
    coords, orientation = _orient(coords, entropy_bits)
    return ValueManifold(
        n_prompts=n, n_columns=int(matrix.shape[1]), n_dropped_columns=n_dropped,
        pc1=stats["pc1"], pc12=stats["pc12"], pr=stats["pr"],
        pc1_ci95=cis["pc1"], pc12_ci95=cis["pc12"], pr_ci95=cis["pr"], ci_method=ci_method,
        ci_contains_estimate={name: _contains(cis[name], stats[name]) for name in STATISTICS},
        spectrum=[float(v) for v in _ratios(eig)],
        gaussian_null=gauss, shuffle_null=shuffle,
        above_shuffle_null={name: bool(stats[name] > shuffle[name]["high"]) for name in ("pc1", "pc12")},
        above_gaussian_null={name: bool(stats[name] > gauss[name]["high"]) for name in ("pc1", "pc12")},
        pc1_coords=[float(v) for v in coords[:, 0]],
        pc2_coords=[float(v) for v in coords[:, 1]] if coords.shape[1] > 1 else None,
        n_boot=n_boot, n_null=n_null, seed=seed, **orientation)


def layer_profile(values, entropy_bits=None, n_boot: int = 200, n_null: int = 50, seed: int = 0,
                  ci: str = "bootstrap") -> list[ValueManifold]:
    """values: [n_prompts, n_layers, n_kv_heads, d_head] (or [n_prompts, n_layers, d_model] for the
    residual readout). One ValueManifold per layer, in layer order (section 2.6), with cheaper default
    resampling than `value_manifold`; every layer uses the same seed."""
    values = np.asarray(values)
    if values.ndim < 3:
        raise AnalysisError(f"layer_profile expects [n_prompts, n_layers, ...], got shape {values.shape}")
    n, n_layers = values.shape[:2]
    return [value_manifold(values[:, layer].reshape(n, -1), entropy_bits, n_boot=n_boot, n_null=n_null, seed=seed,
                           ci=ci) for layer in range(n_layers)]


def ungroup(values, n_heads: int) -> np.ndarray:
    """Repeat each key/value head for the query heads that read it (GQA; METHODS.md 1.1):
    query head h uses kv head h // (n_heads / n_kv_heads). The kv-head axis is -2
    ([..., n_kv_heads, d_head] -> [..., n_heads, d_head])."""
    values = np.asarray(values)
    n_kv_heads = values.shape[-2]
    if n_heads % n_kv_heads:
        raise AnalysisError(f"n_heads={n_heads} is not a multiple of the {n_kv_heads} key/value heads")
    return np.repeat(values, n_heads // n_kv_heads, axis=-2)


@dataclass(frozen=True)
class CrossModelBasis:
    """One PCA over models that share prompts (section 2.7): each model standardised on its own."""

    models: list  # model names, in column order
    n_prompts: int
    n_kept_columns: dict  # model -> columns kept
    n_dropped_columns: dict  # model -> zero-variance columns dropped
    pc1: float
    pc12: float
    pr: float
    pc1_loading_share: dict  # model -> share of PC1's squared loadings on its columns (sums to 1)
    pc1_coords: list
    pc2_coords: list | None
    pc1_sign: str
    rho_pc1_entropy_raw: float | None
    rho_pc1_entropy: float | None
    abs_rho_pc1_entropy: float | None
    rho_pc1_entropy_pvalue: float | None

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def cross_model_basis(matrices: dict, entropy_bits=None) -> CrossModelBasis:
    """matrices: model name -> [n_prompts, p_model], rows in the same prompt order for every model.
    A model with more columns weighs more in the joint PCA; pc1_loading_share shows by how much."""
    if not matrices:
        raise AnalysisError("cross_model_basis needs at least one model's matrix")
    blocks, kept, dropped = [], {}, {}
    n = None
    for name, matrix in matrices.items():
        matrix = _finite_matrix(matrix, f"the value matrix of {name}")
        if matrix.ndim != 2:
            raise AnalysisError(f"{name}: expected [n_prompts, p], got shape {matrix.shape}")
        if n is None:
            n = matrix.shape[0]
        elif matrix.shape[0] != n:
            raise AnalysisError(f"{name} has {matrix.shape[0]} prompts, the others {n}: models must share prompts")
        z, n_dropped = standardise(matrix)
        blocks.append(z)
        kept[name], dropped[name] = int(z.shape[1]), n_dropped
    _check_rows(n)
    entropy_bits = _entropy_vector(entropy_bits, n)
    z = np.concatenate(blocks, axis=1)
    if z.shape[1] == 0:
        raise AnalysisError("no model has a column that varies across prompts: nothing to analyse")
    stats = spectrum_statistics(covariance_eigenvalues(z))
    coords, loadings = _principal_coordinates(z)
    coords, orientation = _orient(coords, entropy_bits)
    squared = loadings[:, 0] ** 2
    bounds = np.cumsum([0] + [kept[name] for name in matrices])
    share = {name: float(squared[bounds[i]:bounds[i + 1]].sum() / squared.sum()) for i, name in enumerate(matrices)}
    return CrossModelBasis(
        models=list(matrices), n_prompts=n, n_kept_columns=kept, n_dropped_columns=dropped,
        pc1=stats["pc1"], pc12=stats["pc12"], pr=stats["pr"], pc1_loading_share=share,
        pc1_coords=[float(v) for v in coords[:, 0]],
        pc2_coords=[float(v) for v in coords[:, 1]] if coords.shape[1] > 1 else None, **orientation)
