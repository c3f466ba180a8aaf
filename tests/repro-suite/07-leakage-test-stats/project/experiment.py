import numpy as np

from features import scale_features
from model import NearestCentroid
from pipeline import split
from transactions import load_transactions

if __name__ == "__main__":
    X, y = load_transactions()
    X = scale_features(X)
    X_train, X_val, y_train, y_val = split(X, y)
    model = NearestCentroid().fit(X_train, y_train)
    print("validation accuracy", round(float((model.predict(X_val) == y_val).mean()), 3))
