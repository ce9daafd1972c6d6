def is_balanced(expr):
    """Check that brackets in ``expr`` are properly nested."""
    pairs = {")": "(", "]": "[", "}": "{"}
    stack = []
    for ch in expr:
        if ch in "([{":
            stack.append(ch)
        elif ch in pairs:
            if not stack or stack.pop() != pairs[@@Cch]:
                return False
    return not @@Cstack
