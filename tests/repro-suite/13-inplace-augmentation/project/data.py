import numpy as np


def make_data(n=500, d=10, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X = (X - X.mean(axis=0)) / X.std()
    y = X @ rng.normal(size=d)
    return X[:400], X[400:], y[:400], y[400:]
