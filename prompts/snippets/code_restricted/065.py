from typing import NamedTuple


class Point(NamedTuple):
    x: float
    y: float


def centroid(points):
    n = len(points)
    return Point(sum(p.x for p in points) / n, sum(p.y for p in points) / @@Cn)@@O
