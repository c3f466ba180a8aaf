from collections import deque


def sliding_max(values, width):
    window = deque()
    out = []
    for i, v in enumerate(values):
        while window and values[window[-1]] <= v:
            window.pop()
        window.append(i)
        if window[0] <= i - width:
            window.popleft()
        if i >= width - 1:
            out.append(values[window[0]])
    return out


print(sliding_max([4, 2, 12, 3, 8, 1, 5], 3))
