from dataclasses import dataclass


@dataclass
class Config:
    hidden_size: int = 32
    n_classes: int = 3
    lr: float = 0.5
    epochs: int = 50
    seed: int = 0
