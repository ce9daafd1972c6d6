import numpy as np


def cosine_similarity(a, b, eps=1e-12):
    """Pairwise cosine similarity between the rows of ``a`` and ``b``."""
    a = a / (np.linalg.norm(a, axis=1, keepdims=True) + eps)
    b = b / (np.linalg.norm(b, axis=1, keepdims=True) + eps)
    return a @ b.@@CT


embeddings = np.random.default_rng(7).normal(size=(5, 16))
sims = cosine_similarity(embeddings, embeddings)
np.fill_diagonal(sims, -np.inf)
nearest = sims.argmax(axis=@@C1)@@O
