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
prompt out: no duplicated rows); compare pc1 with the nulls, not with the ends of its CI. The n
leave-one-out spectra are exact (leave_one_out_statistics: pr in closed form, the top two
eigenvalues of every leave-out at once by a preconditioned search in the row space, to 1e-12 of
the trace), and cost about what a few products with the n x p matrix cost per leave-out.
Nulls: i.i.d. Gaussian matrices of the same n x p_kept shape, and every column permuted
independently across prompts (parallel analysis). Both go through the same standardisation. Their
random draws depend only on the shape and the seed, which every layer of a profile shares: a
process makes each Gaussian draw once, and draws the shuffle's permutations once (gathering them
for each layer's matrix), with exactly the numbers of fresh draws.
"""

from __future__ import annotations

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


def _one_at_a_time_ns(n: int, p: int) -> float:
    """Measured nanoseconds (one core) of one leave-out by the cheaper one-at-a-time route, with its
    overhead (a Python step, and in the row space the copy of its n - 1 rows)."""
    return 6e4 + min(0.05 * n * n * p + _spectrum_ns(n) + 10.0 * n * p, 4.0 * p * p + _spectrum_ns(p))


def _batched_ns(n: int, p: int) -> float:
    """Measured nanoseconds (one core) of the whole batched route (_batched_leave_one_out), fitted on
    n = 24-1,600, p = 8-4,096 to within about 30%: k = n coordinates (p + 2 with n > p), the search's
    products (n p k), the Frobenius norms (n p^2), the basis (k^3) and per-leave-out work."""
    k = n if n <= p else p + 2
    return (0.59 * n * p * k + 0.18 * n * p * p + 0.31 * k**3 + 460.0 * n * k + 2900.0 * n + 2.0 * p * p
            + 2.8e6)


def leave_one_out_route(n: int, p: int) -> str:
    """How leave_one_out_statistics computes an n x p jackknife: "batched" (every leave-out at once,
    _batched_leave_one_out), or one leave-out at a time: "row space" (each spectrum re-fitted from its
    rows), "cross-product, formed" (each downdated p x p matrix formed, full spectrum) or
    "cross-product, products" (above DENSE_SPECTRUM_MAX columns: never formed), whichever is measured
    cheaper (_batched_ns against n x _one_at_a_time_ns: one at a time only for a few dozen rows)."""
    if n >= BATCHED_MIN_ROWS and _batched_ns(n, p) < n * _one_at_a_time_ns(n, p):
        return "batched"
    return _one_at_a_time_route(n, p)


def _one_at_a_time_route(n: int, p: int) -> str:
    """The cheaper one-at-a-time route (_OneAtATime) for an n x p matrix."""
    if _row_space_cheaper(n, p):
        return "row space"
    return "cross-product, formed" if p <= DENSE_SPECTRUM_MAX else "cross-product, products"


def _leave_out_moments(z: np.ndarray, s1: np.ndarray, s2: np.ndarray, rows) -> tuple[np.ndarray, np.ndarray]:
    """Column means and variances of z without row i, for each row i of `rows` ([len(rows), p] each)."""
    n = z.shape[0]
    zi = z[rows]
    mean = (s1 - zi) / (n - 1)
    return mean, (s2 - zi * zi) / (n - 1) - mean * mean


class _OneAtATime:
    """The exact leave-one-out [pc1, pc12, pr] of one row at a time by `route` (leave_one_out_route's
    one-at-a-time routes); the batched route's fallback for a leave-out it does not settle."""

    def __init__(self, z: np.ndarray, route: str):
        self.z, self.route = z, route
        self.s1, self.s2 = z.sum(axis=0), (z * z).sum(axis=0)
        self.gram = z @ z.T if route == "row space" else z.T @ z
        self.leading = np.linalg.eigh(self.gram)[1][:, -1] if self.gram.shape[0] > DENSE_SPECTRUM_MAX else None
        self.square = self.gram * self.gram if route == "cross-product, products" else None

    def __call__(self, row: int) -> np.ndarray:
        z, gram = self.z, self.gram
        n, p = z.shape
        zi = z[row]
        mean, var = (v[0] for v in _leave_out_moments(z, self.s1, self.s2, [row]))
        keep = var > 1e-10  # as resample_eigenvalues: a column constant without row i is dropped
        if not keep.any():
            return np.full(len(STATISTICS), np.nan)
        if self.square is not None:
            scale = np.zeros(p)
            scale[keep] = 1.0 / np.sqrt(var[keep])
            return _downdated_statistics(gram, self.square, zi, np.sqrt(n - 1) * mean, scale, self.leading)
        scale = 1.0 / np.sqrt(var[keep])
        if self.route == "row space":
            others = np.delete(np.arange(n), row)
            scaled = (z[np.ix_(others, keep)] - mean[keep]) * scale
            matrix, start = scaled @ scaled.T, None if self.leading is None else self.leading[others]
        else:
            cross = gram - np.outer(zi, zi) - (n - 1) * np.outer(mean, mean)
            if not keep.all():
                cross = cross[np.ix_(keep, keep)]
            matrix, start = cross * scale[:, None] * scale[None, :], None
        return symmetric_statistics(matrix, start)


def leave_one_out_statistics(z: np.ndarray) -> np.ndarray:
    """[n, 3]: [pc1, pc12, pr] of standardise(X without row i) for each row i, given z = standardise(X);
    row i equals _resampled_statistics(z, np.delete(np.arange(n), i)) to rounding (tested to 1e-9).

    Leaving out row i re-centres the columns by m = (s1 - z_i) / (n - 1) and rescales them by
    1 / sd_i, so its covariance is C_i = D_i (G - z_i z_i' - (n - 1) m m') D_i with G = z'z: trace
    and squared Frobenius norm (which give pr) are closed forms in G (_leave_out_frobenius), pc1 and
    pc12 need the top two eigenvalues. Re-fitting each leave-out costs about n p^2 + p^3 (n^2 p + n^3
    in the row space when p > n), so the jackknife would grow like n^2 p^2. The batched route
    (_batched_leave_one_out) finds the top two eigenvalues of every leave-out at once: a block
    Davidson search in one coordinate system of the row space, where the full sample's Gram matrix
    z z' is diagonal (its exact inverse preconditions every leave-out's search, which converges in
    2 to 5 steps even when the top eigenvalues have no gap), each step one matrix product for all
    leave-outs, stopped when the eigenvalue errors bound below JACKKNIFE_TOLERANCE of the trace.
    Small matrices, where that costs more, take one leave-out at a time (leave_one_out_route):
    from G in O(p^2) whatever n is (formed for a dense spectrum; above DENSE_SPECTRUM_MAX columns
    only multiplied by vectors: _downdated_statistics) or, with few rows and many columns
    (_row_space_cheaper), re-fitted from its rows; large matrices give only their top two
    eigenvalues, started from the full sample's leading eigenvector."""
    n, p = z.shape
    route = leave_one_out_route(n, p)
    if route == "batched":
        return _batched_leave_one_out(z)
    one = _OneAtATime(z, route)
    return np.stack([one(row) for row in range(n)]) if n else np.full((0, len(STATISTICS)), np.nan)


JACKKNIFE_TOLERANCE = 1e-12  # batched route: each leave-out's top two eigenvalues to this share of its trace
DAVIDSON_STEPS = 10  # batched route: search steps before a leave-out falls back to one-at-a-time
BATCHED_MIN_ROWS = 24  # below this many rows one leave-out at a time is always cheaper
BATCH_BYTES = 64 << 20  # batched route: working memory for one batch of leave-outs


class _RowSpace:
    """The leave-one-out covariances of a standardised [n, p] z in one orthonormal coordinate system of
    the row space, where the full sample's Gram matrix z z' is diagonal (eigenvalues `lam`, largest
    first). With p >= n the coordinates are those of the n eigenvectors U of z z'. With n > p they are
    those of an orthonormal basis U [n, p + 1] of the span of the columns of z and of 1 (QR of
    [1 / sqrt(n), z], rotated to diagonalise z z'), plus one coordinate per leave-out along f_i, the part
    of e_i outside that span (length phi_i): leave-out i's rows span a subspace of U and e_i.

    Leave-out i is the matrix M_i = P_i (z - 1 m_i') D_i^2 (z - 1 m_i')' P_i on the row space, P_i the
    projection that zeroes row i: its non-zero eigenvalues are those of C_i. Vectors c live in the
    subspace e_i' v = 0, i.e. c orthogonal to e_i's coordinates g_i = (u_i, phi_i). In coordinates,
    with B = z'U [p, k] and omega = U'1 (and z'f_i = 0, 1'f_i = 0):
        w = d_i^2 * (B c_U - m_i (omega . c_U))            D_i^2 (z - 1 m_i')' v, a p-vector
        M_i c = (B'w - omega (m_i . w), 0) - y_i g_i,      y_i = z_i . w - m_i . w (row i, zeroed by P_i)
    two products with B (2 p k multiply-adds) per vector; z z' is diag(lam) here, so the search's
    preconditioner (z z' - theta)^-1 is exact and free."""

    def __init__(self, z: np.ndarray):
        n, p = z.shape
        if n <= p:
            lam, basis = np.linalg.eigh(z @ z.T)
            self.phi = None
        else:
            q, r = np.linalg.qr(np.hstack([np.full((n, 1), 1.0 / math.sqrt(n)), z]))
            lam, rotation = np.linalg.eigh(r[:, 1:] @ r[:, 1:].T)
            basis = q @ rotation
        self.lam, self.basis = np.clip(lam[::-1], 0.0, None), np.ascontiguousarray(basis[:, ::-1])
        self.z, self.k = z, self.basis.shape[1]
        self.product = z.T @ self.basis  # B = z'U [p, k]
        self.omega = self.basis.sum(axis=0)  # U'1
        if n > p:
            self.phi = np.sqrt(np.clip(1.0 - (self.basis * self.basis).sum(axis=1), 0.0, None))
            self.lam = np.append(self.lam, 0.0)
        self.size = self.k + (self.phi is not None)

    def constraint(self, rows: np.ndarray) -> np.ndarray:
        """g_i [L, size]: e_i's coordinates, unit vectors (the rows left out)."""
        g = self.basis[rows]
        return g if self.phi is None else np.concatenate([g, self.phi[rows][:, None]], axis=1)

    def start(self, rows: np.ndarray, count: int = 3) -> np.ndarray:
        """The full sample's top `count` eigenvectors, for every leave-out [L, count, size]. Leaving out
        a row (two rank-one downdates, and a rescaling near 1) moves each eigenvalue at most down to
        the next but one, so a leave-out's top two eigenvectors lie mostly in this span: started
        from the top two only, a search can settle on the third eigenvalue for the second."""
        start = np.zeros((len(rows), count, self.size))
        start[:, np.arange(count), np.arange(count)] = 1.0
        return start

    def apply(self, rows: np.ndarray, mean: np.ndarray, weight: np.ndarray, c: np.ndarray) -> np.ndarray:
        """M_i c for leave-out rows[l] and each of its vectors c[l] [L, b, size]; mean, weight (d_i^2): [L, p]."""
        count, b, _ = c.shape
        p, k = self.product.shape
        cu = c[:, :, :k]
        w = (cu.reshape(count * b, k) @ self.product.T).reshape(count, b, p)
        w -= mean[:, None, :] * (cu @ self.omega)[:, :, None]
        w *= weight[:, None, :]
        mw = (w @ mean[:, :, None])[:, :, 0]
        out = np.zeros_like(c)
        out[:, :, :k] = (w.reshape(count * b, p) @ self.product).reshape(count, b, k) - self.omega * mw[:, :, None]
        yi = (w @ self.z[rows][:, :, None])[:, :, 0] - mw
        return out - yi[:, :, None] * self.constraint(rows)[:, None, :]

    def correction(self, x: np.ndarray, r: np.ndarray, theta: np.ndarray) -> np.ndarray:
        """Olsen's correction -K^-1 r + eps K^-1 x (orthogonal to x in K's metric), K = z z' - theta, for
        Ritz vectors x and residuals r [L, b, size] (theta [L, b]): diagonal in these coordinates."""
        shift = self.lam - theta[:, :, None]
        floor = 1e-10 * max(float(self.lam[0]), 1e-300)
        shift = np.where(np.abs(shift) < floor, np.where(shift < 0, -floor, floor), shift)
        kr, kx = r / shift, x / shift
        den = (x * kx).sum(axis=2)
        eps = (x * kr).sum(axis=2) / np.where(den == 0, 1.0, den)
        return eps[:, :, None] * kx - kr


def _constrained(c: np.ndarray, g: np.ndarray) -> np.ndarray:
    """c [L, b, size] projected orthogonally to the unit vectors g [L, size]."""
    return c - (c @ g[:, :, None]) * g[:, None, :]


def _orthonormalised(basis: np.ndarray, new: np.ndarray, g: np.ndarray) -> np.ndarray:
    """The new directions [L, b, size] orthonormalised against the orthonormal basis [L, m, size] and
    each other (classical Gram-Schmidt twice), in the subspace orthogonal to g; a direction that lies
    (to 1e-10 of its length) in the span becomes the zero vector, which adds nothing to the search."""
    out = np.zeros_like(new)
    new = _constrained(new, g)
    for j in range(new.shape[1]):
        span = np.concatenate([basis, out[:, :j]], axis=1)
        w = new[:, j]
        before = np.linalg.norm(w, axis=1)
        for _ in range(2):
            w = w - ((span @ w[:, :, None]).transpose(0, 2, 1) @ span)[:, 0]
        norm = np.linalg.norm(w, axis=1)
        kept = norm > 1e-10 * before
        w = _constrained(np.where(kept[:, None], w / np.where(kept, norm, 1.0)[:, None], 0.0)[:, None], g)[:, 0]
        w = w - ((span @ w[:, :, None]).transpose(0, 2, 1) @ span)[:, 0]  # what the projection's rounding left
        norm = np.linalg.norm(w, axis=1)
        out[:, j] = np.where((norm > 0.5)[:, None], w / np.where(norm > 0, norm, 1.0)[:, None], 0.0)
    return out


def _top_two_batched(space: _RowSpace, rows: np.ndarray, mean: np.ndarray, weight: np.ndarray,
                     tolerance: np.ndarray) -> np.ndarray:
    """[L, 2]: the top two eigenvalues of leave-out rows[l], each within tolerance[l] (NaN where the
    search did not get there in DAVIDSON_STEPS steps). Block Davidson: the search space starts from
    the full sample's top three eigenvectors; each step adds Olsen's corrections of the two Ritz pairs
    not yet settled (_RowSpace.correction) and applies every leave-out's matrix to them at once.
    A Ritz value theta_j with residual norm r_j is within min(r_j, r_j^2 / gap_j) of an eigenvalue
    (gap_1 = theta_1 - theta_2 - r_2, gap_2 = theta_2 - theta_3: the distance to the next Ritz value);
    Ritz values never exceed the eigenvalues they approach. No residual shows an eigenvalue that the
    search space misses altogether: the start (_RowSpace.start) is what rules that out."""
    g = space.constraint(rows)
    start = space.start(rows)
    count, b, size = start.shape
    width = b + 2 * DAVIDSON_STEPS
    basis, image = np.zeros((count, width, size)), np.zeros((count, width, size))
    projected = np.zeros((count, width, width))
    basis[:, :b] = _orthonormalised(basis[:, :0], start, g)
    image[:, :b] = space.apply(rows, mean, weight, basis[:, :b])
    projected[:, :b, :b] = basis[:, :b] @ image[:, :b].transpose(0, 2, 1)
    top = np.full((count, 2), np.nan)
    active = np.arange(count)
    m = b
    for step in range(DAVIDSON_STEPS + 1):
        t = projected[:, :m, :m]
        theta, vectors = np.linalg.eigh(0.5 * (t + t.transpose(0, 2, 1)))
        k = min(3, m)
        theta, vectors = theta[:, ::-1][:, :k], vectors[:, :, ::-1][:, :, :k]
        x = vectors.transpose(0, 2, 1) @ basis[:, :m]
        r = vectors.transpose(0, 2, 1) @ image[:, :m] - theta[:, :, None] * x
        res = np.linalg.norm(r, axis=2)
        err = res[:, :2].copy()
        if k == 3:
            gap = np.stack([theta[:, 0] - theta[:, 1] - res[:, 1], theta[:, 1] - theta[:, 2]], axis=1)
            err = np.minimum(err, np.where(gap > 0, res[:, :2] ** 2 / np.where(gap > 0, gap, 1.0), np.inf))
        # a Ritz vector on zero directions (dropped corrections) is no eigenvector: never settled
        settled = (err <= tolerance[active][:, None]) & (np.linalg.norm(x[:, :2], axis=2) > 0.5)
        done = settled.all(axis=1)
        top[active[done]] = theta[done, :2]
        if done.all() or step == DAVIDSON_STEPS:
            break
        if done.any():
            keep = ~done
            active, basis, image, projected = active[keep], basis[keep], image[keep], projected[keep]
            x, r, theta, settled, g = x[keep], r[keep], theta[keep], settled[keep], g[keep]
            mean, weight = mean[keep], weight[keep]
        new = space.correction(x[:, :2], r[:, :2], theta[:, :2])
        new[settled] = 0.0
        new = _orthonormalised(basis[:, :m], new, g)
        basis[:, m:m + 2] = new
        image[:, m:m + 2] = space.apply(rows[active], mean, weight, new)
        projected[:, :m + 2, m:m + 2] = basis[:, :m + 2] @ image[:, m:m + 2].transpose(0, 2, 1)
        projected[:, m:m + 2, :m] = projected[:, :m, m:m + 2].transpose(0, 2, 1)
        m += 2
    return top


FROBENIUS_BLOCK = 256  # columns of H = G * G formed at a time


def _leave_out_weights(z: np.ndarray, s1: np.ndarray, s2: np.ndarray, rows) -> tuple[np.ndarray, np.ndarray]:
    """For each leave-out of `rows`: its column means m_i and weights d_i^2 = 1 / var_i, 0 for a column
    constant without row i (as resample_eigenvalues drops it), [len(rows), p] each."""
    mean, var = _leave_out_moments(z, s1, s2, rows)
    keep = var > 1e-10
    return mean, np.where(keep, 1.0 / np.where(keep, var, 1.0), 0.0)


def _leave_out_frobenius(z: np.ndarray, gram: np.ndarray | None, s1: np.ndarray,
                         s2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Squared Frobenius norms [n] of every C_i = D_i (G - a a' - b b') D_i (a = z_i, b = sqrt(n - 1) m_i,
    u = d_i^2), expanded as in _downdated_statistics with (ua)'G(ua) = |z (ua)|^2; and the size of
    the largest term against the result (the factor by which rounding grows in the cancellation:
    large when row i dominates some columns). G = z'z (given, or formed FROBENIUS_BLOCK columns at a
    time, each block once for all leave-outs: u'Hu costs n p^2)."""
    n, p = z.shape
    rows_at_once = int(max(1, min(n, BATCH_BYTES // (8 * 4 * p))))
    batches = [np.arange(lo, min(n, lo + rows_at_once)) for lo in range(0, n, rows_at_once)]
    hu = np.zeros(n)
    for lo in range(0, p, FROBENIUS_BLOCK):
        cols = slice(lo, lo + FROBENIUS_BLOCK)
        block = gram[:, cols] if gram is not None else z.T @ z[:, cols]
        square = block * block
        for rows in batches:
            u = _leave_out_weights(z, s1, s2, rows)[1]
            hu[rows] += ((u @ square) * u[:, cols]).sum(axis=1)
    frobenius, largest = np.empty(n), np.empty(n)
    for rows in batches:
        mean, u = _leave_out_weights(z, s1, s2, rows)
        a, b = z[rows], math.sqrt(n - 1) * mean
        ua, ub = u * a, u * b
        cross = ((ua @ gram) * ua).sum(axis=1) if gram is not None else ((ua @ z.T) ** 2).sum(axis=1)
        cross_b = ((ub @ gram) * ub).sum(axis=1) if gram is not None else ((ub @ z.T) ** 2).sum(axis=1)
        small = (ua * a).sum(axis=1) ** 2 + 2 * (ua * b).sum(axis=1) ** 2 + (ub * b).sum(axis=1) ** 2
        frobenius[rows] = hu[rows] - 2 * cross - 2 * cross_b + small
        largest[rows] = np.maximum(hu[rows], 2 * cross + 2 * cross_b + small)
    return frobenius, largest / np.where(frobenius > 0, frobenius, np.nan)


FROBENIUS_CANCELLATION = 8.0  # batched route: above this growth a leave-out's pr is taken one at a time


def _batched_leave_one_out(z: np.ndarray) -> np.ndarray:
    """leave_one_out_statistics for every leave-out at once (route "batched", see _RowSpace and
    _top_two_batched): trace sum_j d_j^2 (G_jj - a_j^2 - b_j^2) and Frobenius norm
    (_leave_out_frobenius) in closed form, the top two eigenvalues by the batched search to
    JACKKNIFE_TOLERANCE of the trace. A leave-out the search does not settle, or whose Frobenius
    expansion cancels (FROBENIUS_CANCELLATION: a row that dominates its columns), is computed by
    the exact one-at-a-time route instead."""
    n, p = z.shape
    out = np.full((n, len(STATISTICS)), np.nan)
    s1, s2 = z.sum(axis=0), (z * z).sum(axis=0)
    gram = z.T @ z if p <= n else None
    diagonal = np.diag(gram) if gram is not None else s2
    frobenius, growth = _leave_out_frobenius(z, gram, s1, s2)
    space = _RowSpace(z)
    per_row = 8 * (2 * (3 + 2 * DAVIDSON_STEPS) * space.size + 8 * space.size + 8 * p)  # search space, image, work
    batch = int(min(n, max(1, BATCH_BYTES // per_row)))
    redo = []
    for lo in range(0, n, batch):
        rows = np.arange(lo, min(n, lo + batch))
        mean, weight = _leave_out_weights(z, s1, s2, rows)
        b = math.sqrt(n - 1) * mean
        a = z[rows]
        trace = (weight * (diagonal - a * a - b * b)).sum(axis=1)
        usable = (weight > 0).any(axis=1) & (trace > 0)
        if not usable.any():
            continue
        rows, mean, weight, trace = (v[usable] for v in (rows, mean, weight, trace))
        top = _top_two_batched(space, rows, mean, weight, JACKKNIFE_TOLERANCE * trace)
        out[rows] = np.stack([top[:, 0] / trace, top.sum(axis=1) / trace, trace**2 / frobenius[rows]], axis=1)
        redo.extend(rows[np.isnan(top[:, 0]) | ~(growth[rows] <= FROBENIUS_CANCELLATION)].tolist())
    if redo:
        one = _OneAtATime(z, _one_at_a_time_route(n, p))
        for row in redo:
            out[row] = one(row)
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


def _seed_key(seed: int | np.random.SeedSequence) -> tuple:
    """A hashable key for a seed: an int, or a SeedSequence (its entropy, spawn key and pool size)."""
    if isinstance(seed, np.random.SeedSequence):
        return repr(seed.entropy), tuple(seed.spawn_key), seed.pool_size
    return repr(int(seed)), (), None


def gaussian_null(n: int, p: int, n_null: int = 200, seed: int | np.random.SeedSequence = 0) -> dict:
    """pc1/pc12/pr of standardised i.i.d. Gaussian [n, p] matrices: median and 2.5/97.5 percentiles,
    plus the median top-20 spectrum (ratios). It depends only on the shape and the seed, so each draw
    is made once per (n, p, seed) in a process: every layer of a profile shares them, and a call with
    fewer draws summarises the first n_null of the same stream (what a fresh draw of n_null gives)."""
    key = (n, p, _seed_key(seed))
    entry = _GAUSSIAN_DRAWS.get(key)
    if entry is None:
        if len(_GAUSSIAN_DRAWS) >= 64:
            _GAUSSIAN_DRAWS.pop(next(iter(_GAUSSIAN_DRAWS)))
        entry = _GAUSSIAN_DRAWS[key] = {"draws": [], "spectra": [],
                                        "state": np.random.default_rng(seed).bit_generator.state}
    if len(entry["draws"]) < n_null:
        rng = np.random.default_rng(seed)
        rng.bit_generator.state = entry["state"]  # where the draws made so far left the stream
        for _ in range(n_null - len(entry["draws"])):
            eig = _standardised_eigenvalues(rng.standard_normal((n, p)))
            entry["draws"].append(spectrum_statistics(eig))
            entry["spectra"].append(_ratios(eig))
        entry["state"] = rng.bit_generator.state
    return _null_summary(entry["draws"][:n_null], entry["spectra"][:n_null], "gaussian", (n, p))


_GAUSSIAN_DRAWS: dict = {}  # (n, p, seed key) -> {"draws", "spectra", "state": the generator after them}


def _draw_gaussian_null(n: int, p: int, n_null: int, seed) -> dict:
    """gaussian_null drawn afresh (no cache)."""
    rng = np.random.default_rng(seed)
    draws, spectra = [], []
    for _ in range(n_null):
        eig = _standardised_eigenvalues(rng.standard_normal((n, p)))
        draws.append(spectrum_statistics(eig))
        spectra.append(_ratios(eig))
    return _null_summary(draws, spectra, "gaussian", (n, p))


SHUFFLE_CACHE_BYTES = 64 << 20  # shuffle_null: permutations kept for the next matrix of the same shape and seed
_SHUFFLES: dict = {}  # one entry: (n, p, seed key) -> {"indices": [row index arrays], "state": generator after them}


def _shuffled(z: np.ndarray, n_null: int, seed: int | np.random.SeedSequence):
    """Yields rng.permuted(z, axis=0) for n_null successive draws of rng = np.random.default_rng(seed).
    The permutations depend only on the shape and the seed, and every layer of a profile shuffles
    with the same seed, so they are drawn once (as row index arrays, up to SHUFFLE_CACHE_BYTES) and
    gathered for each matrix: numpy shuffles a 2-d array column by column with draws that do not
    depend on the values, so shuffling an index array draws the same permutations (tested)."""
    n, p = z.shape
    columns = np.asfortranarray(z)  # contiguous columns shuffle faster; the draws are the same
    key = (n, p, _seed_key(seed))
    if key not in _SHUFFLES:
        _SHUFFLES.clear()
        _SHUFFLES[key] = {"indices": [], "state": np.random.default_rng(seed).bit_generator.state}
    entry = _SHUFFLES[key]
    kept = np.int16 if n <= np.iinfo(np.int16).max else np.intp  # as stored (8-byte items shuffle fastest)
    room = SHUFFLE_CACHE_BYTES // max(1, n * p * np.dtype(kept).itemsize)
    rng, order, shuffled = None, None, None
    for draw in range(n_null):
        if draw < len(entry["indices"]):
            yield np.take_along_axis(columns, entry["indices"][draw], axis=0)
            continue
        if rng is None:
            rng = np.random.default_rng(seed)
            rng.bit_generator.state = entry["state"]
        if draw == len(entry["indices"]) and draw < room:
            if order is None:
                order = np.asfortranarray(np.broadcast_to(np.arange(n, dtype=np.intp)[:, None], (n, p)))
                offsets = np.arange(p, dtype=np.intp) * n
            rows = rng.permuted(order, axis=0)
            entry["indices"].append(rows.astype(kept, order="F"))
            entry["state"] = rng.bit_generator.state
            rows += offsets  # flat positions in the column-major data: the fastest gather
            yield columns.ravel(order="F").take(rows.ravel(order="F")).reshape((n, p), order="F")
        else:
            shuffled = np.empty_like(columns) if shuffled is None else shuffled
            yield rng.permuted(columns, axis=0, out=shuffled)


def shuffle_null(z: np.ndarray, n_null: int = 200, seed: int | np.random.SeedSequence = 0) -> dict:
    """Same summary for a standardised matrix whose columns are permuted independently across rows.
    Permuting keeps each column's mean and variance, so z needs no re-standardising."""
    draws, spectra = [], []
    for shuffled in _shuffled(z, n_null, seed):
        eig = covariance_eigenvalues(shuffled)
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
    gaussian_null: dict | None  # {"pc1": {"median","low","high"}, "pc12": ..., "pr": ..., "spectrum_median", ...}
    shuffle_null: dict | None  # None (and the above_ fields): n_null = 0, no null drawn
    above_shuffle_null: dict | None  # {"pc1": bool, "pc12": bool}: estimate > the null's 97.5th percentile
    above_gaussian_null: dict | None
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


def _above(stats: dict, null: dict | None) -> dict | None:
    """{"pc1": bool, "pc12": bool}: each estimate above the null's 97.5th percentile (None: no null drawn)."""
    return None if null is None else {name: bool(stats[name] > null[name]["high"]) for name in ("pc1", "pc12")}


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

    gauss = gaussian_null(n, z.shape[1], n_null, seed=gauss_seed) if n_null else None
    shuffle = shuffle_null(z, n_null, seed=shuffle_seed) if n_null else None

    coords, _ = _principal_coordinates(z)
    coords, orientation = _orient(coords, entropy_bits)
    return ValueManifold(
        n_prompts=n, n_columns=int(matrix.shape[1]), n_dropped_columns=n_dropped,
        pc1=stats["pc1"], pc12=stats["pc12"], pr=stats["pr"],
        pc1_ci95=cis["pc1"], pc12_ci95=cis["pc12"], pr_ci95=cis["pr"], ci_method=ci_method,
        ci_contains_estimate={name: _contains(cis[name], stats[name]) for name in STATISTICS},
        spectrum=[float(v) for v in _ratios(eig)],
        gaussian_null=gauss, shuffle_null=shuffle,
        above_shuffle_null=_above(stats, shuffle), above_gaussian_null=_above(stats, gauss),
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
