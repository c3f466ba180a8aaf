import numpy as np

from closed_form import ridge_closed_form
from regdata import make_regression

LR = 0.01
ALPHA = 0.1


def ridge_loss(X, y, w, alpha):
    r = X @ w - y
    return float(r @ r / len(y) + alpha * w @ w)


def ridge_grad(X, y, w, alpha):
    return 2 * X.T @ (X @ w - y) / len(y) + 2 * alpha * w


def gradient_descent(X, y, alpha=ALPHA, lr=LR, iters=40):
    w = np.zeros(X.shape[1])
    for it in range(iters):
        if it % 10 == 0:
            print(f"iter {it:<3} loss {ridge_loss(X, y, w, alpha):.4g}")
        w = w + lr * ridge_grad(X, y, w, alpha)
    return w


if __name__ == "__main__":
    X, y = make_regression()
    w = gradient_descent(X, y)
    print("closed form loss", ridge_loss(X, y, ridge_closed_form(X, y, ALPHA), ALPHA))
