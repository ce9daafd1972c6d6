from collections import deque


def bfs(graph, start):
    """Return nodes in breadth-first order starting from ``start``."""
    seen = {start}
    order = []
    queue = deque([start])
    while queue:
        node = queue.@@Cpopleft()
        order.append(node)
        for neighbour in graph[node]:
            if neighbour not in @@Cseen:
                seen.add(neighbour)
                queue.append(@@Mneighbour)
    return order@@O
