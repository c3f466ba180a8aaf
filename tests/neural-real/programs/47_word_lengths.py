sentence = "the quick brown fox jumps over the lazy dog"
words = sentence.split()
by_length = {}
for w in words:
    by_length.setdefault(len(w), []).append(w)
longest = max(by_length)
unique = sorted(set(words))
print(by_length[longest], len(unique))
