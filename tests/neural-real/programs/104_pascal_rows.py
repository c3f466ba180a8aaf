def pascal(n):
    row = [1]
    for _ in range(n):
        yield row
        row = [1] + [a + b for a, b in zip(row, row[1:])] + [1]


triangle = list(pascal(5))
widths = [len(" ".join(map(str, r))) for r in triangle]
for r, w in zip(triangle, widths):
    print(" ".join(map(str, r)).center(max(widths)))
