CONFIG = {
    "learning_rate": 0.05,
    "epochs": 5,
    "n_samples": 400,
    "n_features": 6,
    "seed": 0,
}
