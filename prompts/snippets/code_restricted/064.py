def histogram(values, bins=10):
    """Return bin edges and counts for ``values`` without numpy."""
    lo, hi = min(values), max(values)
    width = (hi - lo) / bins or 1.0
    counts = [0] * bins
    for v in values:
        i = min(int((v - lo) / width), bins - @@C1)
        counts[i] += 1@@O
    edges = [lo + i * width for i in range(bins + @@C1)]
    return edges, counts
