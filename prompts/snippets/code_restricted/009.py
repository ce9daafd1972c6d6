def fibonacci():
    """Yield the Fibonacci numbers forever."""
    a, b = 0, 1
    while @@CTrue:
        yield a
        a, b = b, @@Ma + b


from itertools import islice
first_ten = list(islice(fibonacci(), @@C10))
