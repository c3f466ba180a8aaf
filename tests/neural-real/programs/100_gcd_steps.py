def gcd(a, b):
    steps = 0
    while b:
        a, b = b, a % b
        steps += 1
    return a, steps


def lcm(a, b):
    g, _ = gcd(a, b)
    return a * b // g


pairs = [(48, 18), (7, 5)]
print([gcd(a, b) for a, b in pairs], lcm(4, 6))
