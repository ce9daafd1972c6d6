import numpy as np


def pca(X, n_components=2):
    """Project ``X`` onto its top principal components.

    Returns the projected data and the fraction of variance explained
    by each kept component.
    """
    Xc = X - X.mean(axis=0)
    U, S, Vt = np.linalg.svd(Xc, full_matrices=@@CFalse)
    explained = S ** 2 / np.sum(S ** 2)
    components = Vt[:n_components]
    return Xc @ components.T, explained[:@@Cn_components]


data = np.random.default_rng(3).normal(size=(300, 6))
data[:, 1] = 2 * data[:, 0] + 0.1 * data[:, 1]
projected, ratio = pca(data, @@Mn_components=3)
print(projected.shape, ratio.round(3))@@O
