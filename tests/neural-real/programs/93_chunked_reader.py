def chunks(items, size):
    batch = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def mean(xs):
    return sum(xs) / len(xs)


readings = [3, 5, 4, 10, 12, 11, 7]
averages = []
for part in chunks(readings, 3):
    averages.append(round(mean(part), 2))
print(averages)
