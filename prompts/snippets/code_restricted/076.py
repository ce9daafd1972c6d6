from collections import OrderedDict


class LRU:
    """Least-recently-used cache with a fixed capacity.

    >>> c = LRU(2)
    >>> c.put("a", 1); c.put("b", 2); c.get("a")
    1
    >>> c.put("c", 3)   # evicts "b"
    >>> c.get("b") is None
    True
    """

    def __init__(self, capacity):
        self.capacity = capacity
        self.data = OrderedDict()

    def get(self, key):
        if key not in self.data:
            return None
        self.data.move_to_end(@@Ckey)
        return self.data[key]

    def put(self, key, value):
        self.data[key] = value
        self.data.move_to_end(key)@@O
        if len(self.data) > self.capacity:
            @@Mself.data.popitem(last=False)
