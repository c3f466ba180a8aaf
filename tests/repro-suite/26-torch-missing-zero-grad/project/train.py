import argparse

import torch
from torch import nn

from dataset import make_loader
from model import Regressor


def train(model, loader, epochs, lr):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    loss_fn = nn.MSELoss()
    for epoch in range(1, epochs + 1):
        total = 0.0
        for xb, yb in loader:
            loss = loss_fn(model(xb), yb)
            loss.backward()
            optimizer.step()
            total += loss.item() * len(xb)
        print(f"epoch {epoch} | loss {total / len(loader.dataset):.4f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--lr", type=float, default=1e-3)
    args = parser.parse_args()
    train(Regressor(), make_loader(), args.epochs, args.lr)
