# Merge sort: split the list in halves, sort each half, merge them.
# The call tree shows the halving; step out (r) of a call to see the
# sorted half it returns.

def merge(left, right):
    merged = []
    i = j = 0
    while i < len(left) and j < len(right):
        if left[i] <= right[j]:
            merged.append(left[i])
            i += 1
        else:
            merged.append(right[j])
            j += 1
    return merged + left[i:] + right[j:]


def merge_sort(items):
    if len(items) <= 1:
        return items
    middle = len(items) // 2
    return merge(merge_sort(items[:middle]), merge_sort(items[middle:]))


print(merge_sort([38, 27, 43, 3, 9, 82, 10]))
