class Matrix:
    """A small dense matrix stored as a list of rows."""

    def __init__(self, rows):
        if not rows or any(len(r) != len(rows[0]) for r in rows):
            raise ValueError("rows must be non-empty and of equal length")
        self.rows = [list(r) for r in rows]

    @property
    def shape(self):
        return len(self.rows), len(self.rows[0])

    def transpose(self):
        return Matrix([list(col) for col in zip(*@@Cself.rows)])

    def __matmul__(self, other):
        n, k = self.shape
        k2, m = other.shape
        if k != k2:
            raise ValueError(f"shape mismatch: {self.shape} @ {@@Mother.shape}")
        cols = other.transpose().rows@@O
        return Matrix([[sum(a * b for a, b in zip(row, col)) for col in cols]
                       for row in @@Mself.rows])

    def __eq__(self, other):
        return isinstance(other, Matrix) and self.rows == other.rows@@O
