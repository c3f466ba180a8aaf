# Aliasing: `b = a` does not copy a list; both names refer to the SAME
# object (look at the #tags in the variables). Changing one changes the
# other. `list(a)` makes a real copy.

a = [1, 2, 3]
b = a            # an alias: same object
c = list(a)      # a copy: a new object
b.append(4)      # a changes too!
print(a, b, c)

grid = [[0] * 3] * 3      # three references to ONE row
grid[0][0] = 1
print(grid)               # every row changed

grid = [[0] * 3 for _ in range(3)]   # three separate rows
grid[0][0] = 1
print(grid)
