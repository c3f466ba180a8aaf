import numpy as np


class EarlyStopping:
    """Remembers the parameters with the lowest validation loss."""

    def __init__(self):
        self.best_loss = np.inf
        self.best_params = None

    def update(self, params, val_loss):
        if val_loss < self.best_loss:
            self.best_loss = val_loss
            self.best_params = params
        return self.best_params

    def save(self, path):
        np.save(path, self.best_params)
