def topological_sort(deps):
    """Order tasks so that every task comes after its dependencies.

    ``deps`` maps a task to the set of tasks it depends on. Raises
    ``ValueError`` if the dependencies contain a cycle.
    """
    indegree = {t: 0 for t in deps}
    dependents = {t: [] for t in deps}
    for task, needs in deps.items():
        for need in needs:
            indegree.setdefault(need, 0)
            dependents.setdefault(need, []).append(task)
            indegree[task] += 1@@O
    ready = [t for t, d in indegree.items() if d == 0]
    order = []
    while ready:
        task = ready.pop()
        order.append(task)
        for nxt in dependents.get(task, ()):
            indegree[nxt] -= 1
            if indegree[nxt] == @@C0:
                ready.append(nxt)
    if len(order) != len(indegree):
        raise ValueError(@@M"dependency cycle detected")
    return order@@O
