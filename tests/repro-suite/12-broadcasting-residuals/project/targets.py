import numpy as np


def load_features(n=200, d=3, seed=0):
    return np.random.default_rng(seed).normal(size=(n, d))


def load_targets(n=200, seed=0):
    X = load_features(n, seed=seed)
    noise = np.random.default_rng(seed + 1).normal(size=n)
    return (X @ np.array([1.0, -2.0, 0.5]) + noise).reshape(-1, 1)
