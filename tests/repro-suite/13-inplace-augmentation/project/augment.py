import numpy as np


def jitter(X, sigma, rng):
    """Returns X with Gaussian noise added, for augmentation."""
    X += rng.normal(0, sigma, size=X.shape)
    return X


def random_flip(X, rng):
    mask = rng.random(len(X)) < 0.5
    out = X.copy()
    out[mask] = out[mask][:, ::-1]
    return out
