import numpy as np


class OneNearestNeighbour:
    def fit(self, X, y):
        self.X, self.y = X, y
        return self

    def predict(self, X):
        d = ((X[:, None, :] - self.X[None, :, :]) ** 2).sum(axis=2)
        return self.y[d.argmin(axis=1)]
