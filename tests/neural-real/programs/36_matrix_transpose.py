grid = [[1, 2, 3], [4, 5, 6]]
transposed = [[row[i] for row in grid] for i in range(3)]
diag_sum = 0
for i in range(2):
    diag_sum += grid[i][i]
flat = [x for row in transposed for x in row]
print(transposed, diag_sum, flat)
