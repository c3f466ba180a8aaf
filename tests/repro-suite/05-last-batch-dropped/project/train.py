from data.loader import BatchLoader
from data.synthetic import regression_data
from model import LinearModel


def train(epochs=2, batch_size=32, lr=0.1):
    X, y = regression_data()
    model = LinearModel(X.shape[1])
    loader = BatchLoader(X, y, batch_size, shuffle=False)
    for epoch in range(epochs):
        seen = 0
        for xb, yb in loader:
            model.w -= lr * model.gradient(xb, yb)
            seen += len(xb)
        print(f"samples seen this epoch: {seen} (dataset has {len(X)})")
    return model


if __name__ == "__main__":
    train()
