# Convert a list of (key, value) pairs into a nested dict keyed by dotted paths.
def unflatten(pairs):
    root = {}
    for dotted, value in pairs:
        node = root
        *parents, leaf = dotted.split(@@C".")
        for part in parents:
            node = node.setdefault(part, @@C{})
        node[leaf] = @@Mvalue
    return root@@O
