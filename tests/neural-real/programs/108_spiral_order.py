def spiral(grid):
    out = []
    top, bottom = 0, len(grid) - 1
    left, right = 0, len(grid[0]) - 1
    while top <= bottom and left <= right:
        out.extend(grid[top][left:right + 1])
        top += 1
        for r in range(top, bottom + 1):
            out.append(grid[r][right])
        right -= 1
        if top <= bottom:
            out.extend(reversed(grid[bottom][left:right + 1]))
            bottom -= 1
        if left <= right:
            for r in range(bottom, top - 1, -1):
                out.append(grid[r][left])
            left += 1
    return out


print(spiral([[1, 2, 3], [4, 5, 6], [7, 8, 9]]))
