def collatz_steps(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


lengths = {n: collatz_steps(n) for n in range(1, 7)}
longest = max(lengths, key=lengths.get)
print(lengths, longest)
