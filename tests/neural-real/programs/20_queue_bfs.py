from collections import deque

graph = {"a": ["b", "c"], "b": ["d"], "c": ["d"], "d": []}


def bfs(start):
    seen = [start]
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for nxt in graph[node]:
            if nxt not in seen:
                seen.append(nxt)
                queue.append(nxt)
    return seen


print(bfs("a"))
