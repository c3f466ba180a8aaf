VOWELS = set("aeiou")


def vowel_share(word):
    hits = [c for c in word.lower() if c in VOWELS]
    return len(hits) / len(word)


words = ["Banana", "sky", "Queue"]
shares = {}
for w in words:
    shares[w] = round(vowel_share(w), 2)
best = sorted(shares.items(), key=lambda kv: -kv[1])[0]
print(shares, best)
