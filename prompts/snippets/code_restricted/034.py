def sieve(limit):
    """Return all primes up to and including ``limit``."""
    if limit < 2:
        return []
    is_prime = [True] * (limit + 1)
    is_prime[0] = is_prime[1] = @@CFalse
    for n in range(2, int(limit ** 0.5) + 1):
        if is_prime[n]:
            for multiple in range(n * n, limit + 1, @@Cn):
                is_prime[multiple] = False
    return [n for n, flag in enumerate(is_prime) if @@Cflag]
