def rle_encode(text):
    """Run-length encode a string: 'aaabcc' -> [('a', 3), ('b', 1), ('c', 2)]."""
    if not text:
        return []
    runs = []
    current, count = text[0], 1
    for ch in text[1:]:
        if ch == current:
            count += 1
        else:
            runs.append((current, count))@@O
            current, count = ch, @@C1
    runs.append((current, count))
    return runs


def rle_decode(runs):
    return "".join(@@Mch * n for ch, n in runs)
