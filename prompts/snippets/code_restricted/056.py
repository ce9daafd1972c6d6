class Counter:
    """Count occurrences of hashable items."""

    def __init__(self, items=()):
        self.counts = {}
        for item in items:
            @@Mself.add(item)

    def add(self, item):
        self.counts[item] = self.counts.get(item, 0) + @@C1

    def most_common(self, n=1):
        @@O
