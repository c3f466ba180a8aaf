import os

import numpy as np


def load_readings(path="data/readings.csv", n_samples=400, n_features=6, seed=0):
    """Loads sensor readings; falls back to simulated readings when the file is missing."""
    if os.path.exists(path):
        raw = np.loadtxt(path, delimiter=",")
        return raw[:, :-1], raw[:, -1]
    rng = np.random.default_rng(seed)
    X = rng.uniform(100, 900, size=(n_samples, n_features))
    y = (X[:, 0] + X[:, 1] > 1000).astype(float)
    return X, y


def train_test_split(X, y, ratio=0.8):
    cut = int(len(X) * ratio)
    return X[:cut], X[cut:], y[:cut], y[cut:]
