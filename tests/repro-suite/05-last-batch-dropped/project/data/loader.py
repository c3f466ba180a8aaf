import numpy as np


class BatchLoader:
    """Yields (X, y) mini-batches of a dataset, optionally shuffled each epoch."""

    def __init__(self, X, y, batch_size, shuffle=True, seed=0):
        self.X, self.y = X, y
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.rng = np.random.default_rng(seed)

    def __iter__(self):
        order = self.rng.permutation(len(self.X)) if self.shuffle else np.arange(len(self.X))
        for start in range(0, len(self.X) - self.batch_size, self.batch_size):
            idx = order[start:start + self.batch_size]
            yield self.X[idx], self.y[idx]

    def __len__(self):
        return len(self.X) // self.batch_size
