def evaluate(coefficients, x):
    result = 0
    for c in coefficients:
        result = result * x + c
    return result


def derivative(coefficients):
    n = len(coefficients) - 1
    return [c * (n - i) for i, c in enumerate(coefficients[:-1])]


poly = [2, -3, 0, 5]
values = [evaluate(poly, x) for x in range(3)]
slope = evaluate(derivative(poly), 1)
print(values, slope)
