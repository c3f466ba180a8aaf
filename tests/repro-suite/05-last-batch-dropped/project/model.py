import numpy as np


class LinearModel:
    def __init__(self, d):
        self.w = np.zeros(d)

    def __call__(self, X):
        return X @ self.w

    def gradient(self, X, y):
        return 2 * X.T @ (self(X) - y) / len(y)
