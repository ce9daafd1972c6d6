"""Clusters in a representation, counted and scored against known labels (paper I's claim that
Mamba's last layer forms one cluster per hidden state on the 5-state HMM).

cluster_structure(X, labels) runs k-means for every k in a range, picks the count with the largest
silhouette (the mean over points of (b - a) / max(a, b), a the mean distance to the point's own
cluster, b to the nearest other; between -1 and 1, near 0 for a blob without structure), and
scores the clustering at that count and at the number of distinct labels against the labels:
purity (each cluster named by its most frequent label; the fraction of points whose label is
their cluster's) and the adjusted Rand index (0 in expectation for clusters unrelated to the
labels, 1 for the labels' own partition). Purity's chance level depends on the label frequencies
and the number of clusters, so each purity comes with the same clustering's purity against the
labels shuffled (the control for the label frequencies); the adjusted Rand index needs none.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from geomprobe.errors import AnalysisError


@dataclass
class ClusterScore:
    k: int  # clusters
    silhouette: float  # mean silhouette of the clustering
    purity: float  # fraction of points whose label is their cluster's most frequent one
    purity_shuffled: float  # the same clustering against the labels shuffled: purity's chance level here
    adjusted_rand: float  # adjusted Rand index against the labels (0: unrelated, 1: the labels' partition)


@dataclass
class ClusterStructure:
    n_points: int
    n_labels: int  # distinct labels
    dims: int  # dimensions clustered (after the PCA)
    silhouettes: dict  # k -> mean silhouette
    count: int  # the k with the largest silhouette
    at_count: ClusterScore  # the clustering at `count`
    at_labels: ClusterScore  # the clustering with as many clusters as labels
    others: dict  # name -> {"at_count", "at_labels"}: the same two clusterings against other labels

    def to_dict(self) -> dict:
        return asdict(self)


def purity(assigned: np.ndarray, labels: np.ndarray) -> float:
    """Sum over clusters of its most frequent label's count, over the number of points."""
    assigned = np.asarray(assigned)
    codes = np.unique(np.asarray(labels), return_inverse=True)[1]
    total = sum(int(np.bincount(codes[assigned == cluster]).max()) for cluster in np.unique(assigned))
    return float(total / len(codes))


def _score(X: np.ndarray, assigned: np.ndarray, labels: np.ndarray, k: int, silhouette: float,
           rng: np.random.Generator) -> ClusterScore:
    from sklearn.metrics import adjusted_rand_score

    return ClusterScore(k=k, silhouette=silhouette, purity=purity(assigned, labels),
                        purity_shuffled=purity(assigned, rng.permutation(labels)),
                        adjusted_rand=float(adjusted_rand_score(labels, assigned)))


def cluster_structure(X, labels, k_range: range = range(2, 11), max_dims: int = 10, seed: int = 0,
                      silhouette_sample: int = 2000, others: dict | None = None) -> ClusterStructure:
    """k-means on X [n, d] (centred, projected on its top `max_dims` principal components) for each
    k in k_range; the count with the largest silhouette; purity and adjusted Rand index against
    `labels` [n] at that count and at the number of distinct labels, and the same two clusterings
    against each of `others` (name -> labels [n]: what else the clusters might follow)."""
    from sklearn.cluster import KMeans
    from sklearn.metrics import silhouette_score
    from threadpoolctl import threadpool_limits

    X = np.asarray(X, dtype=np.float64)
    labels = np.asarray(labels)
    if X.ndim != 2 or len(X) != len(labels):
        raise AnalysisError(f"cluster_structure: X must be [n, d] with one label per row, got {X.shape} and "
                            f"{labels.shape}")
    if not np.isfinite(X).all():
        raise AnalysisError("cluster_structure: the representation holds NaN or infinite values")
    n_labels = len(np.unique(labels))
    ks = sorted(set(k_range) | {n_labels})
    if len(X) < 5 * max(ks):
        raise AnalysisError(f"cluster_structure: {len(X)} points are too few for up to {max(ks)} clusters "
                            f"(need at least {5 * max(ks)})")
    centred = X - X.mean(axis=0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    Z = centred @ vt[:max_dims].T
    rng = np.random.default_rng(seed)
    sample = rng.choice(len(Z), size=min(silhouette_sample, len(Z)), replace=False)
    fits, silhouettes = {}, {}
    with threadpool_limits(limits=1):  # small problems: threads cost 40x on a busy machine, and give the same fits
        for k in ks:
            assigned = KMeans(n_clusters=k, n_init=4, random_state=seed).fit_predict(Z)
            fits[k] = assigned
            silhouettes[k] = float(silhouette_score(Z[sample], assigned[sample])) \
                if len(np.unique(assigned[sample])) > 1 else 0.0
    searched = {k: s for k, s in silhouettes.items() if k in k_range}
    count = max(searched, key=searched.get)

    def both(against) -> dict:
        against = np.asarray(against)
        if against.shape != labels.shape:
            raise AnalysisError(f"cluster_structure: other labels of shape {against.shape}, expected {labels.shape}")
        return {"at_count": _score(Z, fits[count], against, count, silhouettes[count], rng),
                "at_labels": _score(Z, fits[n_labels], against, n_labels, silhouettes[n_labels], rng)}

    primary = both(labels)
    return ClusterStructure(n_points=len(Z), n_labels=n_labels, dims=Z.shape[1], silhouettes=searched, count=count,
                            at_count=primary["at_count"], at_labels=primary["at_labels"],
                            others={name: both(values) for name, values in (others or {}).items()})
