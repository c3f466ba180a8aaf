moves = []


def hanoi(n, src, dst, via):
    if n == 0:
        return
    hanoi(n - 1, src, via, dst)
    moves.append((src, dst))
    hanoi(n - 1, via, dst, src)


hanoi(2, "A", "C", "B")
print(len(moves), moves)
