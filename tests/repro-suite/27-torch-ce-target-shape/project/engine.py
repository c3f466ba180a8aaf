import torch
from torch import nn

criterion = nn.CrossEntropyLoss()


def run_epoch(model, loader, optimizer):
    model.train()
    for features, labels in loader:
        optimizer.zero_grad()
        logits = model(features)
        loss = criterion(logits, labels)
        loss.backward()
        optimizer.step()
    return loss.item()
