def make_adders():
    adders = []
    for n in range(3):
        adders.append(lambda x: x + n)
    return adders


def make_adders_fixed():
    return [lambda x, n=n: x + n for n in range(3)]


late = [f(10) for f in make_adders()]
fixed = [f(10) for f in make_adders_fixed()]
print(late, fixed)
