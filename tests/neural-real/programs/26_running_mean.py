def running_mean(values):
    total = 0
    for count, v in enumerate(values, start=1):
        total += v
        yield total / count


means = []
for m in running_mean([4, 8, 6, 2]):
    means.append(m)
print(means)
