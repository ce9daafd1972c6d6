def knapsack(weights, values, capacity):
    """0/1 knapsack: best total value within ``capacity``.

    Uses a one-dimensional table, iterating capacities downwards so that
    each item is used at most once.
    """
    best = [0] * (capacity + 1)
    for w, v in zip(weights, values):
        for c in range(capacity, w - 1, -1):
            best[c] = max(best[c], best[c - w] + @@Cv)
    return best[capacity]@@O


if __name__ == "__main__":
    weights = [3, 4, 5, 9, 4]
    values = [3, 4, 4, 10, 4]
    print(knapsack(weights, values, @@M11))
