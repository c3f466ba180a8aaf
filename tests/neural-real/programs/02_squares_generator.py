def squares(n):
    for i in range(n):
        yield i * i


evens = [s for s in squares(6) if s % 2 == 0]
total = sum(squares(4))
print(evens, total)
