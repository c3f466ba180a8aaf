def pairs_with_sum(numbers, target):
    seen = set()
    found = []
    for n in numbers:
        if target - n in seen:
            found.append((target - n, n))
        seen.add(n)
    return found


result = pairs_with_sum([3, 9, 4, 6, 1, 8], 10)
count = len(result)
print(count, result)
