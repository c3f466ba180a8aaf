import numpy as np


def make_spirals(n_per_class=100, n_classes=3, seed=0):
    rng = np.random.default_rng(seed)
    X, y = [], []
    for c in range(n_classes):
        r = np.linspace(0.0, 1, n_per_class)
        t = np.linspace(c * 4, (c + 1) * 4, n_per_class) + rng.normal(0, 0.2, n_per_class)
        X.append(np.column_stack([r * np.sin(t), r * np.cos(t)]))
        y += [c] * n_per_class
    y = np.array(y)
    return np.vstack(X), np.eye(n_classes)[y]
