import math


def cosine(step, total, base_lr):
    return 0.5 * base_lr * (1 + math.cos(math.pi * step / total))


def warmup(step, warmup_steps, base_lr):
    return base_lr * min(1.0, (step + 1) / warmup_steps)
