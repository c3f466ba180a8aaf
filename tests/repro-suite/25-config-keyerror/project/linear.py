import numpy as np


class Linear:
    def __init__(self, d):
        self.w = np.zeros(d)

    def loss(self, X, y):
        return float(np.mean((X @ self.w - y) ** 2))

    def gradient(self, X, y):
        return 2 * X.T @ (X @ self.w - y) / len(y)
