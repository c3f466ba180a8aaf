import torch
from torch.utils.data import DataLoader, Dataset


class IntentDataset(Dataset):
    def __init__(self, n=256, dim=20, n_classes=5, seed=0):
        g = torch.Generator().manual_seed(seed)
        self.x = torch.randn(n, dim, generator=g)
        self.y = torch.randint(0, n_classes, (n, 1), generator=g)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


def loader(batch_size=32):
    return DataLoader(IntentDataset(), batch_size=batch_size, shuffle=True)
