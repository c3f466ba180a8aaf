import numpy as np

from config import CONFIG
from housing import load_housing, minibatches


class Trainer:
    def __init__(self, optimizer, seed=0):
        self.optimizer = optimizer
        self.rng = np.random.default_rng(seed)
        self.params = {"w": np.zeros(5), "b": np.zeros(1)}

    def loss_and_grads(self, X, y):
        residual = X @ self.params["w"] + self.params["b"] - y
        loss = float(np.mean(residual ** 2))
        grads = {"w": 2 * X.T @ residual / len(y), "b": np.array([2 * residual.mean()])}
        return loss, grads

    def fit(self, epochs):
        X, y = load_housing(CONFIG["n_samples"])
        for epoch in range(epochs):
            losses = []
            for xb, yb in minibatches(X, y, CONFIG["batch_size"], self.rng):
                loss, grads = self.loss_and_grads(xb, yb)
                self.optimizer.step(self.params, grads)
                losses.append(loss)
            print(f"epoch {epoch} loss {np.mean(losses):.3g}")
        return self.params
