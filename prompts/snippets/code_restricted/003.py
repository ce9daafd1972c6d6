import numpy as np

rng = np.random.default_rng(@@M0)
x = rng.normal(size=(100, 3))
mean = x.mean(axis=@@C0)
centered = x - mean@@O
