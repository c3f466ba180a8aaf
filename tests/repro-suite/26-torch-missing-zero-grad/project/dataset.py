import torch
from torch.utils.data import DataLoader, TensorDataset


def make_loader(n=1024, batch_size=32, seed=0):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, 8, generator=g)
    y = X.sum(dim=1, keepdim=True) + 0.1 * torch.randn(n, 1, generator=g)
    return DataLoader(TensorDataset(X, y), batch_size=batch_size, shuffle=True, generator=g)
