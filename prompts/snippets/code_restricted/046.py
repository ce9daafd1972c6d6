# Group words that are anagrams of each other.
from collections import defaultdict

words = ["listen", "silent", "enlist", "google", "gooegl", "cat", "act"]
groups = defaultdict(list)
for w in words:
    groups["".join(sorted(@@Cw))].append(w)@@O
