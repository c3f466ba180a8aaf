grid = [[3, 1, 4], [1, 5, 9], [2, 6, 5]]

row_sums = [sum(row) for row in grid]
col_max = [max(col) for col in zip(*grid)]
diagonal = [grid[i][i] for i in range(len(grid))]
trace = sum(diagonal)
grid[0][0] = trace
print(row_sums, col_max, trace, grid[0])
