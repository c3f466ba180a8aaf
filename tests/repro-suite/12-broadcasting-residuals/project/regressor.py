import numpy as np


class LeastSquares:
    def fit(self, X, y):
        self.coef, *_ = np.linalg.lstsq(X, np.ravel(y), rcond=None)
        return self

    def predict(self, X):
        return X @ self.coef
