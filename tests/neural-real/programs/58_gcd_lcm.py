def gcd(a, b):
    while b:
        a, b = b, a % b
    return a


def lcm(a, b):
    return a * b // gcd(a, b)


pairs = [(12, 18), (7, 5)]
answers = []
for x, y in pairs:
    answers.append((gcd(x, y), lcm(x, y)))
print(answers)
