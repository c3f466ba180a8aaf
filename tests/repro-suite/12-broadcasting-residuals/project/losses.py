import numpy as np


def mse(y_true, y_pred):
    residual = y_true - y_pred
    print("residual shape", residual.shape)
    return float(np.mean(residual ** 2))


def mae(y_true, y_pred):
    return float(np.mean(np.abs(np.ravel(y_true) - np.ravel(y_pred))))
