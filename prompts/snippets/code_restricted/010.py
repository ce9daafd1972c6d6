import numpy as np


def softmax(z, axis=-1):
    """Numerically stable softmax along ``axis``."""
    z = z - z.max(axis=axis, keepdims=@@CTrue)
    e = np.@@Cexp(z)
    return e / e.sum(axis=axis, keepdims=True)@@O
