# Naive Fibonacci: the same values are computed again and again.
# Open the call tree: fib(2) appears several times. That repeated
# work is why memoisation (see the closures example) helps.

def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


print([fib(i) for i in range(6)])
