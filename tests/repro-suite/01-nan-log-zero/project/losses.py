import numpy as np


def binary_cross_entropy(y, p):
    """Mean binary cross-entropy of labels y and predicted probabilities p."""
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


def bce_gradient(X, y, p):
    error = p - y
    return X.T @ error / len(y), float(error.mean())
