from functools import lru_cache


@lru_cache(maxsize=None)
def count_paths(rows, cols):
    """Number of monotone lattice paths from the top-left to the bottom-right."""
    if rows == 1 or cols == 1:
        return 1
    return count_paths(rows - 1, cols) + count_paths(rows, @@Ccols - 1)


for n in range(1, 8):
    print(n, count_paths(n, n))@@O
