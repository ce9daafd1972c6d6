def transpose(matrix):
    return [list(row) for row in zip(*matrix)]


def rotate_clockwise(matrix):
    """Rotate a square matrix by 90 degrees."""
    return [list(reversed(col)) for col in @@Mzip(*matrix)]


grid = [
    [1, 2, 3],
    [4, 5, 6],
    [7, 8, 9],
]
for row in rotate_clockwise(grid):
    @@Mprint(*row)@@O
