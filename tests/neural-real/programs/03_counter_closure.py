def make_counter(start):
    count = start

    def bump(step=1):
        nonlocal count
        count += step
        return count

    return bump


tick = make_counter(10)
a = tick()
b = tick(5)
double = lambda x: x * 2
c = double(b)
print(a, b, c)
