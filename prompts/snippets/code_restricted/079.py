import numpy as np


def conv2d(image, kernel):
    """Valid 2-D cross-correlation of a grayscale image with a kernel."""
    kh, kw = kernel.shape
    h, w = image.shape
    out = np.empty((h - kh + 1, w - kw + 1))
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            out[i, j] = np.sum(image[i:i + kh, j:j + kw] * @@Ckernel)
    return out


sobel_x = np.array([[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]])
img = np.random.default_rng(5).random((32, 32))
edges = conv2d(img, @@Msobel_x)
print(edges.min(), edges.max())@@O
