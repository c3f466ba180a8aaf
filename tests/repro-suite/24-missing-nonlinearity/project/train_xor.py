import numpy as np

from model import MLP

X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]], dtype=float)
y = np.array([[0], [1], [1], [0]], dtype=float)

if __name__ == "__main__":
    model = MLP()
    for epoch in range(5000):
        p = model.forward(X)
        model.backward(p, y, lr=0.5)
        if epoch in (0, 4999):
            loss = -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))
            print(f"epoch {epoch} loss {loss:.4f} acc {((p > 0.5) == y).mean():.2f}")
