import numpy as np


class SGD:
    """Plain SGD; the step size follows the linear scaling rule for large batches."""

    def __init__(self, base_lr, batch_size, l2=0.0):
        self.lr = base_lr * batch_size
        self.l2 = l2

    def step(self, params, grads):
        for name in params:
            params[name] -= self.lr * (grads[name] + self.l2 * params[name])
        return params
