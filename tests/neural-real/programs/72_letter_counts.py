from collections import Counter

text = "the quick brown fox jumps over the lazy dog the end"
words = text.split()
counts = Counter(words)
top = counts.most_common(2)
rare = sorted(w for w, n in counts.items() if n == 1)[:3]
print(top, rare)
