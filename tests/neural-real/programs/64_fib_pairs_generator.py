def fibonacci():
    a, b = 0, 1
    while True:
        yield a
        a, b = b, a + b


def take(gen, n):
    out = []
    for value in gen:
        if len(out) == n:
            break
        out.append(value)
    return out


first = take(fibonacci(), 7)
evens = [x for x in first if x % 2 == 0]
print(first, evens)
