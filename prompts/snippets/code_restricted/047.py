import numpy as np

counts = np.array([[12, 5, 0], [3, 20, 2], [1, 4, 18]])
precision = counts.diagonal() / counts.sum(axis=@@M0)
recall = counts.diagonal() / counts.sum(axis=@@M1)
f1 = 2 * precision * recall / (precision + @@Crecall)@@O
