import numpy as np


class Perceptron:
    def __init__(self, n_features, lr=0.1):
        self.w = np.zeros(n_features)
        self.lr = lr

    def predict(self, X):
        return (X @ self.w > 0).astype(int)

    def fit(self, X, y, epochs=20):
        for _ in range(epochs):
            for xi, yi in zip(X, y):
                update = self.lr * (yi - self.predict(xi[None])[0])
                self.w += update * xi
        return self
