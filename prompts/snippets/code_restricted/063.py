class Stopwatch:
    def __init__(self):
        self.laps = []
        self._last = None

    def lap(self, now):
        if self._last is not None:
            self.laps.append(now - @@Cself._last)
        self._last = now@@O
