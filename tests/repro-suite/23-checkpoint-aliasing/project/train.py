import numpy as np

from checkpoint import EarlyStopping


def val_loss(w, X, y):
    return float(np.mean((X @ w - y) ** 2))


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 4))
    y = X @ np.array([1.0, 2.0, -1.0, 0.5])
    Xv, yv = X[80:], y[80:] + 2.0
    w = np.zeros(4)
    stopper = EarlyStopping()
    for epoch in range(4):
        w -= 0.3 * 2 * X[:80].T @ (X[:80] @ w - y[:80]) / 80
        loss = val_loss(w, Xv, yv)
        print(f"epoch {epoch} val {loss:.3f}")
        stopper.update(w, loss)
    print(f"restored best weights, val {val_loss(stopper.best_params, Xv, yv):.3f}")
