def two_sum(nums, target):
    """Return indices of the two numbers that add up to target."""
    seen = {}
    for i, n in enumerate(nums):
        complement = target - @@Cn
        if complement in seen:
            return seen[complement], @@Ci
        seen[n] = i@@M
    return None
