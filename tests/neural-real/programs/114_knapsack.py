def knapsack(items, capacity):
    best = [0] * (capacity + 1)
    for weight, value in items:
        for c in range(capacity, weight - 1, -1):
            best[c] = max(best[c], best[c - weight] + value)
    return best[capacity]


items = [(2, 3), (3, 4), (4, 5)]
print(knapsack(items, 5), knapsack(items, 9))
