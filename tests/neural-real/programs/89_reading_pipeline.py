def parse(lines):
    for line in lines:
        try:
            yield float(line.strip())
        except ValueError:
            continue


def clip(values, low, high):
    for v in values:
        if low <= v <= high:
            yield v


def running_max(values):
    best = None
    for v in values:
        if best is None or v > best:
            best = v
        yield best


raw = ["21.5", " 22.0", "n/a", "85.0", "20.5", "23.25\n"]
peaks = list(running_max(clip(parse(raw), -10, 50)))
print(peaks)
