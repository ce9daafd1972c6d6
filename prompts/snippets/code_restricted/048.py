class Graph:
    def __init__(self):
        self.adj = {}

    def add_edge(self, u, v):
        self.adj.setdefault(u, set()).add(v)
        self.adj.setdefault(v, set()).add(@@Cu)

    def has_cycle(self):
        visited = set()

        def visit(node, parent):
            visited.add(node)
            for nxt in self.adj[node]:
                if nxt not in visited:
                    if visit(nxt, node):
                        return True
                elif nxt != @@Cparent:
                    return True
            return @@CFalse

        return any(visit(n, None) for n in self.adj if n not in visited)@@O
