def chunked(iterable, size):
    """Yield successive lists of length ``size`` (the last may be shorter)."""
    chunk = []
    for item in iterable:
        chunk.append(item)
        if len(chunk) == @@Csize:
            yield chunk
            chunk = @@C[]
    if chunk:
        @@Myield chunk
