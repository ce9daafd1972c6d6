import numpy as np


def linear_regression(X, y):
    """Fit y = X w + b by ordinary least squares.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)

    Returns
    -------
    w : ndarray of shape (n_features,)
    b : float
    """
    X1 = np.hstack([X, np.ones((X.shape[0], 1))])
    coef, *_ = np.linalg.lstsq(X1, y, rcond=@@MNone)
    return coef[:-1], coef[-1]@@O


rng = np.random.default_rng(42)
X = rng.uniform(-1, 1, size=(200, 2))
y = X @ np.array([3.0, -2.0]) + 0.5 + rng.normal(scale=0.1, size=@@C200)
w, b = linear_regression(X, y)@@O
