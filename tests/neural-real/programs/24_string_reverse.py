def is_palindrome(word):
    cleaned = "".join(ch.lower() for ch in word if ch.isalpha())
    return cleaned == cleaned[::-1]


words = ["Level", "python", "Never odd or even"]
flags = {}
for w in words:
    flags[w] = is_palindrome(w)
print(flags)
