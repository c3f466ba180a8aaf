import numpy as np


def make_blobs(n_per_class=150, seed=3):
    rng = np.random.default_rng(seed)
    scales = np.array([1.0, 50.0, 0.01])
    a = rng.normal([0, 0, 0], 1, size=(n_per_class, 3)) * scales + [10, 400, 0.5]
    b = rng.normal([2, 1, 2], 1, size=(n_per_class, 3)) * scales + [10, 400, 0.5]
    X = np.vstack([a, b])
    y = np.array([0] * n_per_class + [1] * n_per_class)
    return X, y
