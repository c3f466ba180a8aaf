def shift_char(ch, k):
    if not ch.isalpha():
        return ch
    base = ord("a") if ch.islower() else ord("A")
    return chr((ord(ch) - base + k) % 26 + base)


def caesar(text, k):
    return "".join(shift_char(c, k) for c in text)


secret = caesar("Hi, Bob", 3)
plain = caesar(secret, -3)
print(secret, plain)
