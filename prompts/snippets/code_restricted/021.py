import heapq


def dijkstra(graph, source):
    """Shortest path distances from ``source``.

    ``graph`` maps each node to a list of ``(neighbour, weight)`` pairs.
    All weights must be non-negative.
    """
    dist = {source: 0}
    heap = [(0, source)]
    visited = set()
    while heap:
        d, node = heapq.heappop(heap)@@M
        if node in visited:
            continue
        visited.add(node)@@O
        for neighbour, weight in graph.get(node, ()):
            new_d = d + weight
            if new_d < dist.get(neighbour, float("inf")):
                dist[neighbour] = new_d
                heapq.heappush(heap, (@@Mnew_d, neighbour))
    return dist@@O


if __name__ == "__main__":
    roads = {
        "A": [("B", 4), ("C", 1)],
        "C": [("B", 2), ("D", 5)],
        "B": [("D", 1)],
    }
    @@O
