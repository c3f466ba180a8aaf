import numpy as np

from default_config import CONFIG
from linear import Linear
from trainer import Trainer

X = np.random.default_rng(0).normal(size=(64, 3))
model = Linear(3)
trainer = Trainer(model, CONFIG)
trainer.fit(X, X @ np.array([1.0, -1.0, 2.0]))
