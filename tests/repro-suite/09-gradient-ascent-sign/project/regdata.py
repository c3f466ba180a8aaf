import numpy as np


def make_regression(n=300, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    w = np.arange(1, d + 1, dtype=float)
    return X, X @ w + rng.normal(0, 0.5, n)
