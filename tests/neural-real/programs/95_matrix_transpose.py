def transpose(rows):
    width = len(rows[0])
    out = [[] for _ in range(width)]
    for row in rows:
        for j, value in enumerate(row):
            out[j].append(value)
    return out


def trace(matrix):
    total = 0
    for i in range(min(len(matrix), len(matrix[0]))):
        total += matrix[i][i]
    return total


grid = [[1, 2, 3], [4, 5, 6]]
flipped = transpose(grid)
print(flipped, trace(flipped))
