import numpy as np


def cross_entropy(probs, Y):
    return float(-np.mean(np.sum(Y * np.log(probs + 1e-12), axis=1)))


def fit(net, X, Y, cfg):
    history = []
    for epoch in range(cfg.epochs):
        probs = net.forward(X)
        history.append(cross_entropy(probs, Y))
        grads = net.backward(Y)
        for name, grad in grads.items():
            setattr(net, name, getattr(net, name) - cfg.lr * grad)
    return history
