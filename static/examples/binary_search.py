# Binary search: halve the search range until the target is found.
# Watch low, high and middle: the range shrinks by half each time,
# so 16 items need at most 5 looks.

def binary_search(items, target):
    low, high = 0, len(items) - 1
    while low <= high:
        middle = (low + high) // 2
        if items[middle] == target:
            return middle
        if items[middle] < target:
            low = middle + 1      # the target is in the right half
        else:
            high = middle - 1     # the target is in the left half
    return -1                     # not there


numbers = [1, 3, 4, 7, 9, 11, 15, 18, 21, 24, 30, 33, 38, 41, 45, 50]
print(binary_search(numbers, 33))
print(binary_search(numbers, 8))
