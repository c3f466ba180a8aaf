import numpy as np


def relu(x):
    return np.maximum(x, 0)


def softmax(z):
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


class TwoLayerNet:
    def __init__(self, n_in, n_hidden, n_out, seed=0):
        rng = np.random.default_rng(seed)
        self.W1 = rng.normal(0, 0.1, size=(n_in, n_hidden))
        self.b1 = np.zeros(n_hidden)
        self.W2 = rng.normal(0, 0.1, size=(n_out, n_hidden))
        self.b2 = np.zeros(n_out)

    def forward(self, X):
        self.X = X
        self.h = relu(X @ self.W1 + self.b1)
        logits = self.h @ self.W2 + self.b2
        self.probs = softmax(logits)
        return self.probs

    def backward(self, Y):
        n = len(Y)
        d_logits = (self.probs - Y) / n
        grads = {"W2": self.h.T @ d_logits, "b2": d_logits.sum(axis=0)}
        d_h = d_logits @ self.W2.T * (self.h > 0)
        grads["W1"] = self.X.T @ d_h
        grads["b1"] = d_h.sum(axis=0)
        return grads
