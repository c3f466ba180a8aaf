import numpy as np

from classifier import Perceptron
from dataset import make_blobs
from preprocessing import add_bias_column, standardize

if __name__ == "__main__":
    X, y = make_blobs()
    Xs = standardize(X)
    print("column means", np.round(Xs.mean(axis=0), 2))
    print("column stds", np.round(Xs.std(axis=0), 2))
    model = Perceptron(Xs.shape[1] + 1).fit(add_bias_column(Xs), y)
    print("train accuracy", (model.predict(add_bias_column(Xs)) == y).mean())
