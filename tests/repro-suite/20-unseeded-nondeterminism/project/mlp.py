import numpy as np


class MLP:
    def __init__(self, n_in, n_hidden):
        self.W1 = np.random.randn(n_in, n_hidden)
        self.b1 = np.zeros(n_hidden)
        self.W2 = np.random.randn(n_hidden) * 0.1
        self.b2 = 0.0

    def forward(self, X):
        self.X = X
        self.h = np.tanh(X @ self.W1 + self.b1)
        return 1 / (1 + np.exp(-(self.h @ self.W2 + self.b2)))

    def step(self, p, y, lr):
        d = (p - y) / len(y)
        dh = np.outer(d, self.W2) * (1 - self.h ** 2)
        self.W2 -= lr * self.h.T @ d
        self.b2 -= lr * d.sum()
        self.W1 -= lr * self.X.T @ dh
        self.b1 -= lr * dh.sum(axis=0)
