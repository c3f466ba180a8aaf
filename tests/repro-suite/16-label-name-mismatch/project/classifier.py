import numpy as np


class NearestMean:
    def fit(self, X, y):
        y = np.asarray(y)
        self.means = np.stack([X[y == c].mean(axis=0) for c in range(y.max() + 1)])
        return self

    def predict(self, X):
        return ((X[:, None] - self.means[None]) ** 2).sum(axis=2).argmin(axis=1)
