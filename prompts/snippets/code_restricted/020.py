class Vector2:
    __slots__ = ("x", "y")

    def __init__(self, x, y):
        self.x = x
        self.y = y

    def __add__(self, other):
        return Vector2(self.x + other.x, self.y + @@Cother.y)

    def __mul__(self, k):
        return Vector2(self.x * k, @@Cself.y * k)

    def dot(self, other):
        return @@Mself.x * other.x + self.y * other.y

    def __abs__(self):
        @@O
