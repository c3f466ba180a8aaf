import torch

from data import loader as make_loader
from engine import run_epoch
from model import IntentClassifier


def main():
    model = IntentClassifier()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loader = make_loader()
    for _ in range(3):
        run_epoch(model, loader, optimizer)


if __name__ == "__main__":
    main()
