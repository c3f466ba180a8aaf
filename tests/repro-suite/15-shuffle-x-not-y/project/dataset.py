import numpy as np


def iris_like(n_per_class=50, seed=0):
    rng = np.random.default_rng(seed)
    centers = np.array([[5.0, 3.4, 1.5, 0.2], [5.9, 2.8, 4.3, 1.3], [6.6, 3.0, 5.6, 2.0]])
    X = np.vstack([c + 0.3 * rng.normal(size=(n_per_class, 4)) for c in centers])
    y = np.repeat(np.arange(3), n_per_class)
    return X, y


def prepare_dataset(X, y, shuffle=True, seed=0, test_fraction=0.2):
    if shuffle:
        rng = np.random.default_rng(seed)
        rng.shuffle(X)
    cut = int(len(X) * (1 - test_fraction))
    return X[:cut], X[cut:], y[:cut], y[cut:]
