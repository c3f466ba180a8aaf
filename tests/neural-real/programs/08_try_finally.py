log = []


def risky(x):
    try:
        log.append("start")
        value = 10 // x
        return value
    except ZeroDivisionError:
        log.append("divide by zero")
        return None
    finally:
        log.append("done")


r1 = risky(2)
r2 = risky(0)
print(r1, r2, log)
