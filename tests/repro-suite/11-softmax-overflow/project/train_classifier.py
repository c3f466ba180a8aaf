import numpy as np

from nn.activations import softmax
from nn.layers import Dense


def train(X, y, n_classes, steps=400, lr=5.0, seed=0):
    rng = np.random.default_rng(seed)
    layer = Dense(X.shape[1], n_classes, rng)
    Y = np.eye(n_classes)[y]
    for step in range(steps):
        probs = softmax(layer(X))
        loss = -np.mean(np.log(probs[np.arange(len(y)), y] + 1e-12))
        if step % 10 == 0:
            print(f"step {step} loss {loss:.2f}")
        layer.backward((probs - Y) / len(y), lr)
    return layer


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    X = rng.poisson(3.0, size=(64, 50)).astype(float) * 20
    y = rng.integers(0, 3, 64)
    train(X, y, 3)
