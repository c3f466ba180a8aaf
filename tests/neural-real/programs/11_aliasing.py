a = [1, 2, 3]
b = a
c = list(a)
b.append(4)
c.append(5)
same = a is b
equal = a == c
grid = [[0] * 2] * 2
grid[0][0] = 9
print(a, c, same, equal, grid)
