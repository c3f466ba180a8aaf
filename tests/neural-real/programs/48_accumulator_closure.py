def make_accumulator():
    history = []

    def add(x):
        history.append(x)
        return sum(history)

    return add


acc = make_accumulator()
first = acc(5)
second = acc(7)
other = make_accumulator()
third = other(1)
print(first, second, third)
