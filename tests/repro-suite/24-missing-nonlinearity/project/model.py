import numpy as np


class MLP:
    def __init__(self, n_hidden=8, seed=0):
        rng = np.random.default_rng(seed)
        self.W1 = rng.normal(0, 1, size=(2, n_hidden))
        self.b1 = np.zeros(n_hidden)
        self.W2 = rng.normal(0, 1, size=(n_hidden, 1))
        self.b2 = np.zeros(1)

    def forward(self, X):
        self.X = X
        self.h = X @ self.W1 + self.b1
        return 1 / (1 + np.exp(-(self.h @ self.W2 + self.b2)))

    def backward(self, p, y, lr):
        d = (p - y) / len(y)
        dh = d @ self.W2.T
        self.W2 -= lr * self.h.T @ d
        self.b2 -= lr * d.sum(axis=0)
        self.W1 -= lr * self.X.T @ dh
        self.b1 -= lr * dh.sum(axis=0)
