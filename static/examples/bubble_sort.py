# Bubble sort: swap neighbours that are out of order until none are.
# Set a breakpoint on the swap line and press Continue (c) to watch
# the list change one swap at a time; changed values are highlighted.

def bubble_sort(items):
    n = len(items)
    for end in range(n - 1, 0, -1):
        swapped = False
        for i in range(end):
            if items[i] > items[i + 1]:
                items[i], items[i + 1] = items[i + 1], items[i]   # the swap
                swapped = True
        if not swapped:       # already sorted: stop early
            break
    return items


print(bubble_sort([5, 1, 4, 2, 8]))
