def safe_divide(a, b):
    try:
        return a / b
    except ZeroDivisionError:
        return float("inf")


def average(xs):
    return sum(xs) / len(xs)


ratios = [safe_divide(6, 3), safe_divide(1, 0)]
mean = average([])
print(ratios, mean)
