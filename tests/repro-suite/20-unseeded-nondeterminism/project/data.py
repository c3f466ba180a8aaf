import numpy as np


def two_moons(n=400, noise=0.25, seed=0):
    rng = np.random.default_rng(seed)
    t = rng.uniform(0, np.pi, n)
    labels = rng.integers(0, 2, n)
    x = np.where(labels == 0, np.cos(t), 1 - np.cos(t))
    y = np.where(labels == 0, np.sin(t), 0.5 - np.sin(t))
    X = np.column_stack([x, y]) + noise * rng.normal(size=(n, 2))
    return X, labels


def split(X, y, seed):
    idx = np.random.default_rng(seed).permutation(len(X))
    return X[idx[:300]], X[idx[300:]], y[idx[:300]], y[idx[300:]]
