import numpy as np


class KMeans:
    """Plain k-means clustering with random initial centroids."""

    def __init__(self, k, n_iter=100, seed=0):
        self.k = k
        self.n_iter = n_iter
        self.rng = np.random.default_rng(seed)

    def fit(self, X):
        idx = self.rng.choice(len(X), size=self.k, replace=False)
        self.centroids = X[idx].copy()
        for _ in range(self.n_iter):
            dists = np.linalg.norm(X[:, None, :] - self.centroids[None, :, :], axis=@@C2)
            labels = dists.argmin(axis=1)@@O
            new = np.array([X[labels == j].mean(axis=0) for j in range(self.k)])
            if np.allclose(new, @@Mself.centroids):
                break
            self.centroids = new@@O
        self.labels_ = labels
        return self

    def predict(self, X):
        @@O
