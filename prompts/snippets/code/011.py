def is_palindrome(s):
    cleaned = [c.lower() for c in s if c.@@Misalnum()]
    return cleaned == cleaned[::-@@C1]

assert is_palindrome("Never odd or even")
assert not is_palindrome(@@M"hello")
