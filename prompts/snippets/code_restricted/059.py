def quickselect(items, k):
    """Return the k-th smallest element (0-based) of ``items``."""
    pivot = items[len(items) // 2]
    lows = [x for x in items if x < pivot]
    highs = [x for x in items if x > pivot]
    pivots = [x for x in items if x == @@Cpivot]
    if k < len(lows):
        return quickselect(lows, @@Ck)
    if k < len(lows) + len(pivots):
        return @@Mpivot
    return quickselect(highs, k - len(lows) - @@Mlen(pivots))@@O
