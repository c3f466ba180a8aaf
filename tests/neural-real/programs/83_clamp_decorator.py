import functools


def clamp(low, high):
    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*args):
            result = fn(*args)
            return max(low, min(high, result))

        return wrapper

    return decorate


@clamp(0, 100)
def percent(part, whole):
    return part * 100 // whole


@clamp(-1.0, 1.0)
def slope(dx, dy):
    return dy / dx


scores = [percent(3, 4), percent(9, 4)]
print(scores, slope(2, 5), percent.__name__)
