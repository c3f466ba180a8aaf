from collections import deque


def simulate(arrivals, service_time):
    waiting = deque()
    clock = 0
    served = []
    for t, name in arrivals:
        waiting.append((t, name))
    while waiting:
        t, name = waiting.popleft()
        clock = max(clock, t) + service_time
        served.append((name, clock - t))
    return served


print(simulate([(0, "ann"), (1, "ben"), (5, "cy")], 3))
