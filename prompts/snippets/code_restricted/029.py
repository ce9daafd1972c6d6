import itertools


def pairwise_distances(points):
    """Return a dict mapping each unordered pair of points to its distance."""
    out = {}
    for p, q in itertools.combinations(points, @@C2):
        dx = p[0] - q[0]
        dy = p[1] - q[1]
        out[(p, q)] = (dx * dx + dy * dy) ** @@C0.5
    return out@@O
