def power_set(items):
    """All subsets of ``items``, smallest first."""
    result = [[]]
    for item in items:
        result += [subset + [item] for subset in @@Cresult]
    return sorted(result, key=@@Mlen)
