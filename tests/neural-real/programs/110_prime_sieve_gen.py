from itertools import count, islice


def primes():
    found = []
    for n in count(2):
        if all(n % p for p in found if p * p <= n):
            found.append(n)
            yield n


first = list(islice(primes(), 6))
gaps = [b - a for a, b in zip(first, first[1:])]
print(first, gaps)
