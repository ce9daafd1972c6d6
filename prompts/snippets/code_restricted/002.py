def gcd(a, b):
    while b:
        a, b = b, a % @@Cb
    return a


def lcm(a, b):
    return abs(a * b) // @@Mgcd(a, b)
@@O
