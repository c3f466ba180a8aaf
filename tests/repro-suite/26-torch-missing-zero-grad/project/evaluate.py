import torch


@torch.no_grad()
def evaluate(model, loader, loss_fn):
    model.eval()
    total = sum(loss_fn(model(xb), yb).item() * len(xb) for xb, yb in loader)
    model.train()
    return total / len(loader.dataset)
