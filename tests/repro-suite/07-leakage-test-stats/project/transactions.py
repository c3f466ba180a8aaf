import numpy as np


def load_transactions(n=1000, seed=7):
    rng = np.random.default_rng(seed)
    amount = rng.lognormal(3, 1, n)
    hour = rng.integers(0, 24, n)
    y = (rng.random(n) < 0.3).astype(int)
    amount[y == 1] *= 1.5
    return np.column_stack([amount, hour]).astype(float), y
