import torch
from torch import nn

from checkpointing import load_checkpoint, save_checkpoint
from model import SmallCNN


def fit(model, x, y, steps=50):
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(steps):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    return model


if __name__ == "__main__":
    torch.manual_seed(0)
    x, y = torch.randn(64, 1, 28, 28), torch.randint(0, 10, (64,))
    model = nn.DataParallel(SmallCNN())
    fit(model, x, y)
    save_checkpoint(model, "/tmp/ckpt.pt")
    restored = load_checkpoint(SmallCNN(), "/tmp/ckpt.pt")
    print("max difference", (model.module(x) - restored(x)).abs().max().item())
