def flatten(nested):
    """Flatten arbitrarily nested lists into a single list."""
    out = []
    for item in nested:
        if isinstance(item, list):
            out.extend(@@Mflatten(item))
        else:
            out.append(@@Citem)
    return out@@O
