import numpy as np


def fit(X, y, alpha=1.0):
    d = X.shape[1]
    return np.linalg.solve(X.T @ X + alpha * np.eye(d), X.T @ y)


def predict(X, w):
    return X @ w
