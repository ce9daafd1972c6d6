import time
from functools import wraps

def timed(label=None):
    """Decorator that prints how long the wrapped function took."""
    def decorator(func):
        name = label or func.__name__

        @wraps(@@Cfunc)
        def wrapper(*args, **kwargs):
            start = time.perf_counter()
            try:
                return func(*args, **@@Ckwargs)
            finally:
                elapsed = time.perf_counter() - start
                print(f"{name} took {elapsed:.3f}s")
        return @@Cwrapper
    return decorator


@timed("slow sum")
def slow_sum(n):
    total = 0
    for i in range(n):
        total += i
        @@O
    return total
@@O
