import numpy as np


def split(X, y, ratio=0.8, seed=0):
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(X))
    cut = int(ratio * len(X))
    train, val = order[:cut], order[cut:]
    return X[train], X[val], y[train], y[val]
