"""PCA of standardised final-token vectors (METHODS.md section 2, steps 1-2). numpy only."""

from __future__ import annotations

import numpy as np

from geomprobe.errors import AnalysisError


def standardise(matrix) -> tuple[np.ndarray, int]:
    """Columns to zero mean and unit variance across rows; zero-variance columns dropped.
    Returns (standardised [n, p_kept], number of columns dropped)."""
    matrix = np.asarray(matrix, dtype=np.float64)
    std = matrix.std(axis=0)
    keep = std > 1e-12 * max(1.0, float(np.abs(matrix).max(initial=0.0)))
    kept = matrix[:, keep]
    return (kept - kept.mean(axis=0)) / std[keep], int((~keep).sum())


def explained_variance_ratios(matrix) -> np.ndarray:
    """Covariance eigenvalues of the standardised matrix divided by their sum, largest first."""
    z, _ = standardise(matrix)
    if z.shape[0] < 2 or z.shape[1] == 0:
        raise AnalysisError(f"PCA needs at least 2 rows and 1 varying column, got {z.shape}")
    # the squared singular values of z: eigenvalues of the smaller Gram matrix (a third of the SVD's
    # time at 400 x 1,024; the untrained copies' profiles call this twice per layer)
    n, p = z.shape
    eig = np.clip(np.linalg.eigvalsh(z @ z.T if p > n else z.T @ z)[::-1], 0.0, None)
    return eig / eig.sum()
