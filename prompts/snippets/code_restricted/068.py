import numpy as np

def one_hot(labels, num_classes):
    out = np.zeros((len(labels), num_classes), dtype=@@Mnp.float32)
    out[np.arange(len(labels)), labels] = @@C1.0
    return out
