attempts = []


def flaky(n):
    attempts.append(n)
    if n < 2:
        raise ConnectionError(f"try {n} failed")
    return "connected"


def retry(times):
    for i in range(times):
        try:
            return flaky(i)
        except ConnectionError as err:
            last = str(err)
    return last


status = retry(4)
print(status, attempts)
