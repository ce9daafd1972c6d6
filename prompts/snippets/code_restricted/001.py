def insertion_sort(items):
    """Sort a list in place and return it."""
    for i in range(1, len(items)):@@O
        key = items[i]
        j = i - 1
        while j >= 0 and items[j] > @@Ckey:
            items[j + 1] = items[j]
            j -= 1
        items[j + 1] = @@Mkey
    return items
