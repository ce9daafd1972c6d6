import numpy as np

weights = np.array([0.2, 0.5, 0.3])
scores = np.array([[70, 80, 90], [60, 75, 85]])
weighted = scores @ @@Cweights
best = int(np.argmax(@@Mweighted))@@O
