class RateLimitError(Exception):
    pass


def limiter(max_calls):
    used = 0

    def allow(user):
        nonlocal used
        if used >= max_calls:
            raise RateLimitError(f"{user} blocked after {used} calls")
        used += 1
        return max_calls - used

    return allow


allow = limiter(2)
log = []
checked = 0
for user in ["ana", "ben", "cai", "dee"]:
    try:
        left = allow(user)
        log.append((user, left))
    except RateLimitError as err:
        log.append(str(err))
    finally:
        checked += 1
print(log, checked)
