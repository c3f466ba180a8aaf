import numpy as np

from animals import load_animals
from classifier import NearestMean
from labels import class_names, encode

if __name__ == "__main__":
    X, names = load_animals()
    y = np.array(encode(names))
    model = NearestMean().fit(X[:200], y[:200])
    pred = model.predict(X[200:])
    classes = class_names(names)
    for i in range(3):
        print(f"sample {i}: true={names[200 + i]} predicted={classes[pred[i]]}")
    print(f"accuracy {(pred == y[200:]).mean():.2f}")
