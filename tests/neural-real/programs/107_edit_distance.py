from functools import lru_cache


@lru_cache(maxsize=None)
def distance(a, b):
    if not a:
        return len(b)
    if not b:
        return len(a)
    if a[0] == b[0]:
        return distance(a[1:], b[1:])
    return 1 + min(distance(a[1:], b), distance(a, b[1:]), distance(a[1:], b[1:]))


pairs = [("cat", "cut"), ("sun", "sung")]
scores = {f"{a}->{b}": distance(a, b) for a, b in pairs}
print(scores)
