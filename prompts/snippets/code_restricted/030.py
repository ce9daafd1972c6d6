class RingBuffer:
    """Fixed-size buffer that overwrites its oldest entries when full."""

    def __init__(self, capacity):
        self._data = [None] * capacity
        self._start = 0
        self._size = 0

    def append(self, value):
        end = (self._start + self._size) % len(self._data)
        self._data[end] = value
        if self._size < len(self._data):
            self._size += 1
        else:
            self._start = (self._start + 1) % @@Clen(self._data)

    def __iter__(self):
        for i in range(self._size):
            yield self._data[(self._start + i) % @@Clen(self._data)]

    def __len__(self):
        return self._size@@O
