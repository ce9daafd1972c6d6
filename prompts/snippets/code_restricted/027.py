import numpy as np


def moving_average(x, window):
    """Simple moving average using a cumulative sum."""
    x = np.asarray(x, dtype=float)
    if window < 1 or window > x.size:
        raise ValueError("window out of range")
    c = np.cumsum(np.insert(x, 0, 0.0))
    return (c[window:] - c[:-window]) / @@Cwindow


signal = np.sin(np.linspace(0, 4 * np.pi, 500))
noisy = signal + np.random.default_rng(1).normal(scale=0.3, size=signal.size)
smooth = moving_average(noisy, @@M25)
print(smooth.shape)@@O
