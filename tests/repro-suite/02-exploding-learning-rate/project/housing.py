import numpy as np

FEATURES = ["rooms", "age", "distance", "tax", "lstat"]


def load_housing(n_samples=512, seed=1):
    """Synthetic stand-in for the housing table: features on their natural scales."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([
        rng.normal(6, 1, n_samples),
        rng.uniform(0, 100, n_samples),
        rng.uniform(1, 12, n_samples),
        rng.uniform(180, 700, n_samples) / 100,
        rng.uniform(2, 35, n_samples),
    ])
    true_w = np.array([5.0, -0.05, -1.2, -0.8, -0.6])
    y = X @ true_w + 10 + rng.normal(0, 2, n_samples)
    return X, y


def minibatches(X, y, batch_size, rng):
    order = rng.permutation(len(X))
    for start in range(0, len(X), batch_size):
        idx = order[start:start + batch_size]
        yield X[idx], y[idx]
