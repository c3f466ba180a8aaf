def merge(intervals):
    ordered = sorted(intervals)
    merged = [list(ordered[0])]
    for start, end in ordered[1:]:
        last = merged[-1]
        if start <= last[1]:
            last[1] = max(last[1], end)
        else:
            merged.append([start, end])
    return merged


meetings = [(9, 11), (13, 14), (10, 12), (14, 15)]
busy = merge(meetings)
free_gaps = [(a[1], b[0]) for a, b in zip(busy, busy[1:]) if a[1] < b[0]]
print(busy, free_gaps)
