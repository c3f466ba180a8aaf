import numpy as np

from augment import jitter
from config import CONFIG
from data import make_data

if __name__ == "__main__":
    rng = np.random.default_rng(CONFIG["seed"])
    X_train, X_val, y_train, y_val = make_data()
    w = np.zeros(X_train.shape[1])
    for epoch in range(CONFIG["epochs"]):
        print(f"epoch {epoch} X_train std {X_train.std():.3f}")
        X_batch = jitter(X_train, CONFIG["sigma"], rng) if CONFIG["augment"] else X_train
        for _ in range(20):
            w -= CONFIG["lr"] * 2 * X_batch.T @ (X_batch @ w - y_train) / len(y_train)
        print(f"  val loss {np.mean((X_val @ w - y_val) ** 2):.3f}")
