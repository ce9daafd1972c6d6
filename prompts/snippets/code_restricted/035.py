class Timer:
    """Context manager that measures elapsed wall-clock time."""

    def __enter__(self):
        self.start = time.perf_counter()
        return @@Cself

    def __exit__(self, exc_type, exc, tb):
        self.elapsed = time.perf_counter() - self.start
        return @@MFalse


with Timer() as t:
    total = sum(i * i for i in range(1_000_000))
print(f"took {t.elapsed:.3f} s")@@O
