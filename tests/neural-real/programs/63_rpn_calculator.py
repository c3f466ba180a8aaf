OPS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b}


def evaluate(expression):
    stack = []
    for token in expression.split():
        if token in OPS:
            right = stack.pop()
            left = stack.pop()
            stack.append(OPS[token](left, right))
        else:
            stack.append(int(token))
    return stack[0]


results = []
for expr in ["3 4 + 2 *", "5 x -"]:
    try:
        results.append(evaluate(expr))
    except ValueError:
        results.append(None)
print(results)
