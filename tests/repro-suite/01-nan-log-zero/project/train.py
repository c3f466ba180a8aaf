from config import CONFIG
from data import load_readings, train_test_split
from losses import bce_gradient, binary_cross_entropy
from metrics import accuracy
from model import LogisticRegression


def fit(model, X, y, learning_rate, epochs):
    for epoch in range(epochs):
        p = model.predict_proba(X)
        loss = binary_cross_entropy(y, p)
        print(f"epoch {epoch} loss {loss:.4f}")
        grad_w, grad_b = bce_gradient(X, y, p)
        model.w -= learning_rate * grad_w
        model.b -= learning_rate * grad_b
    return model


if __name__ == "__main__":
    X, y = load_readings(n_samples=CONFIG["n_samples"], n_features=CONFIG["n_features"])
    X_train, X_test, y_train, y_test = train_test_split(X, y)
    model = fit(LogisticRegression(X.shape[1]), X_train, y_train, CONFIG["learning_rate"], CONFIG["epochs"])
    print("test accuracy", accuracy(y_test, model.predict(X_test)))
