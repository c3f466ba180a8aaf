def countdown(n):
    while n > 0:
        yield n
        n -= 1
    yield "liftoff"


steps = list(countdown(3))
evens = [s for s in steps if isinstance(s, int) and s % 2 == 0]
print(steps, evens)
