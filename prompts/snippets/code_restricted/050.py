def clamp(value, low, high):
    """Limit ``value`` to the closed interval [low, high]."""
    return max(low, min(value, @@Chigh))
