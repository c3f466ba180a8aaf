import numpy as np


def zscore(X):
    mu = X.mean(axis=0)
    sigma = X.std(axis=0)
    return (X - mu) / sigma


def rolling_mean(x, window=5):
    kernel = np.ones(window) / window
    return np.convolve(x, kernel, mode="valid")
