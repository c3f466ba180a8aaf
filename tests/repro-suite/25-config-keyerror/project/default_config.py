CONFIG = {
    "learning_rate": 0.1,
    "epochs": 5,
    "batch_size": 16,
    "weight_decay": 0.0,
}
