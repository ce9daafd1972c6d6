import numpy as np

image = np.zeros((64, 64), dtype=np.uint8)
image[16:48, 16:48] = @@M255
mask = image > @@M0
print(mask.sum())@@O
