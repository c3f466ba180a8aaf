CONFIG = {
    "base_lr": 0.01,
    "batch_size": 64,
    "epochs": 10,
    "n_samples": 512,
    "l2": 0.0,
}
