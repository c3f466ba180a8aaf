from config import CONFIG
from optimizer import SGD
from trainer import Trainer

if __name__ == "__main__":
    trainer = Trainer(SGD(base_lr=CONFIG["base_lr"], batch_size=CONFIG["batch_size"], l2=CONFIG["l2"]))
    trainer.fit(CONFIG["epochs"])
