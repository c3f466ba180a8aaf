import numpy as np


def noisy_digits(n=1000, d=16, n_classes=10, noise=1.6, seed=0):
    rng = np.random.default_rng(seed)
    prototypes = rng.normal(size=(n_classes, d))
    y = rng.integers(0, n_classes, n)
    X = prototypes[y] + noise * rng.normal(size=(n, d))
    return X, y
