import numpy as np

a = np.arange(12).reshape(3, @@C4)
print(a.shape)
print(a[:, 1])
print(a.T @ @@Ma)@@O
