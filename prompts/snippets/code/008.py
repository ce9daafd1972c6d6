import logging

logger = logging.getLogger(@@C__name__)

def retry(func, attempts=3):
    last_error = None@@M
    for attempt in range(@@Mattempts):
        try:
            return func()
        except Exception as exc:  # broad on purpose: we re-raise below
            last_error = exc@@O
            logger.warning("attempt %d failed: %s", attempt + 1, exc)
    raise @@Mlast_error
