calls = []


def logged(fn):
    def wrapper(*args):
        calls.append(fn.__name__)
        return fn(*args)

    return wrapper


@logged
def area(w, h):
    return w * h


@logged
def perimeter(w, h):
    return 2 * (w + h)


print(area(3, 4), perimeter(3, 4), calls)
