import heapq

roads = {
    "A": {"B": 4, "C": 1},
    "B": {"D": 1},
    "C": {"B": 2, "D": 5},
    "D": {},
}


def shortest(graph, start):
    best = {start: 0}
    frontier = [(0, start)]
    while frontier:
        dist, node = heapq.heappop(frontier)
        if dist > best[node]:
            continue
        for nxt, cost in graph[node].items():
            if dist + cost < best.get(nxt, float("inf")):
                best[nxt] = dist + cost
                heapq.heappush(frontier, (dist + cost, nxt))
    return best


print(shortest(roads, "A"))
