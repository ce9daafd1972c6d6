def merge_sort(seq):
    if len(seq) <= 1:
        return @@Cseq
    mid = len(seq) // 2
    left = merge_sort(seq[:mid])
    right = merge_sort(seq[@@Cmid:])
    merged = []
    i = j = 0
    while i < len(left) and j < len(right):
        if left[i] <= right[j]:
            merged.append(left[i])
            i += 1
        else:
            merged.append(right[j])
            @@Cj += 1
    merged.extend(left[i:])
    merged.extend(@@Mright[j:])
    return merged@@O
