def make_counter(start=0, step=1):
    count = start

    def tick():
        nonlocal count
        count += step
        return count

    def reset():
        nonlocal count
        count = start

    return tick, reset


tick, reset = make_counter(10, 5)
seen = [tick(), tick()]
reset()
seen.append(tick())
print(seen)
