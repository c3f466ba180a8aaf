CONFIG = {"augment": True, "sigma": 0.5, "epochs": 4, "lr": 0.05, "seed": 0}
