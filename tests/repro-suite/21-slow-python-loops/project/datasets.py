import numpy as np


def gaussian_blobs(n, d, n_classes, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.normal(0, 3, size=(n_classes, d))
    y = rng.integers(0, n_classes, n)
    return centers[y] + rng.normal(size=(n, d)), y
