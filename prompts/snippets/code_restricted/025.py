def longest_common_subsequence(a, b):
    """Length of the longest common subsequence of two strings.

    >>> longest_common_subsequence("kitten", "sitting")
    4
    """
    n, m = len(a), len(b)
    table = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            if a[i - 1] == b[j - 1]:
                table[i][j] = table[i - 1][j - 1] + @@C1
            else:
                table[i][j] = max(table[i - 1][j], @@Ctable[i][j - 1])
    return table[n][m]@@O
