class Stack:
    """A minimal last-in, first-out container."""

    def __init__(self):
        self._items = []

    def push(self, item):
        self._items.append(item)

    def pop(self):
        if not self._items:
            raise IndexError("pop from an empty @@Cstack")
        return self._items.pop()@@M

    def __len__(self):
        return len(self._items)
