import numpy as np


def regression_data(n=100, d=4, noise=0.1, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    w = rng.normal(size=d)
    return X, X @ w + noise * rng.normal(size=n)
