import numpy as np


def load_recording(n=200, seed=0):
    rng = np.random.default_rng(seed)
    temperature = 20 + rng.normal(0, 1, n)
    humidity = 40 + rng.normal(0, 5, n)
    pressure = np.full(n, 1013.0)  # sensor switched off: constant reading
    target = 0.3 * temperature - 0.1 * humidity + rng.normal(0, 0.1, n)
    return np.column_stack([temperature, humidity, pressure]), target
