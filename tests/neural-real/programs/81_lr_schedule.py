import math
from itertools import islice


def schedule(base_lr, warmup, period):
    for step in range(1, warmup + 1):
        yield base_lr * step / warmup
    step = 0
    while True:
        phase = (step % period) / period
        yield round(base_lr * 0.5 * (1 + math.cos(math.pi * phase)), 4)
        step += 1


rates = list(islice(schedule(0.1, 2, 4), 7))
peak = max(rates)
print(rates, peak)
