import numpy as np


def train_test_split(X, y, test_fraction=0.2, seed=0):
    rng = np.random.default_rng(seed)
    idx = rng.permutation(len(X))
    n_test = int(test_fraction * len(X))
    train_idx = idx[: len(X) - n_test]
    test_idx = idx[n_test:]
    return X[train_idx], X[test_idx], y[train_idx], y[test_idx]
