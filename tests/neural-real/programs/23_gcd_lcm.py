def gcd(a, b):
    while b:
        a, b = b, a % b
    return a


def lcm(a, b):
    return a * b // gcd(a, b)


pairs = [(12, 18), (7, 5)]
results = []
for x, y in pairs:
    results.append((gcd(x, y), lcm(x, y)))
print(results)
