import numpy as np


class Trainer:
    def __init__(self, model, config):
        self.model = model
        self.epochs = config["epochs"]
        self.lr = config["lr"]
        self.batch_size = config["batch_size"]

    def fit(self, X, y):
        for epoch in range(self.epochs):
            for start in range(0, len(X), self.batch_size):
                xb, yb = X[start:start + self.batch_size], y[start:start + self.batch_size]
                self.model.w -= self.lr * self.model.gradient(xb, yb)
            print(f"epoch {epoch} loss {self.model.loss(X, y):.4f}")
