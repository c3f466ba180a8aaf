# Closures: an inner function remembers the variables of the function
# that made it, even after that function has returned.

def make_counter():
    count = 0

    def increment():
        nonlocal count      # the enclosing function's variable, not a new one
        count += 1
        return count

    return increment


def memoise(function):
    cache = {}              # lives on in the closure between calls

    def wrapper(n):
        if n not in cache:
            cache[n] = function(n)
        return cache[n]

    return wrapper


counter = make_counter()
counter()
counter()
print("counted", counter())

square = memoise(lambda n: n * n)
print(square(4), square(4))   # the second call comes from the cache
