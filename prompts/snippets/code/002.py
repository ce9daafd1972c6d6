# Count how often each word appears in a text file.
from collections import Counter

def word_counts(path):
    with open(path, encoding="utf-8") as fh:
        words = fh.read().lower().@@Msplit()
    return Counter(words)@@O
