# Recursion: factorial calls itself until it reaches the base case.
# Step into each call (s) and watch the call stack grow, then shrink
# as every call returns (r steps out). The call tree shows all calls.

def factorial(n):
    if n <= 1:          # base case: stops the recursion
        return 1
    return n * factorial(n - 1)   # each call waits for the next one


result = factorial(5)
print("5! =", result)
