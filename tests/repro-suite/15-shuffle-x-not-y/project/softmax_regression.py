import numpy as np


class SoftmaxRegression:
    def __init__(self, n_features, n_classes):
        self.W = np.zeros((n_features, n_classes))
        self.b = np.zeros(n_classes)

    def probabilities(self, X):
        z = X @ self.W + self.b
        z -= z.max(axis=1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=1, keepdims=True)

    def fit(self, X, y, lr=0.1, epochs=300):
        Y = np.eye(self.W.shape[1])[y]
        for _ in range(epochs):
            grad = (self.probabilities(X) - Y) / len(X)
            self.W -= lr * X.T @ grad
            self.b -= lr * grad.sum(axis=0)
        return self

    def predict(self, X):
        return self.probabilities(X).argmax(axis=1)
