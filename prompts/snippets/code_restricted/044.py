import logging
from typing import Callable, TypeVar

T = TypeVar("T")
log = logging.getLogger(__name__)


def with_retries(attempts: int = 3, delay: float = 0.5):
    """Retry the decorated function when it raises ``OSError``."""
    def decorate(fn: Callable[..., T]) -> Callable[..., T]:
        def wrapper(*args, **kwargs) -> T:
            for attempt in range(1, attempts + 1):
                try:
                    return fn(*args, **kwargs)
                except OSError as exc:
                    if attempt == attempts:
                        @@Craise
                    log.info("attempt %d failed (%s); retrying", attempt, exc)@@O
                    time.sleep(delay * @@Mattempt)
            raise AssertionError("unreachable")
        return wrapper
    return decorate@@O
