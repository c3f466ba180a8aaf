import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import Dataset, DataLoader

torch.manual_seed(0)


class SensorDataset(Dataset):
    def __init__(self, features_path, targets_path):
        self.x = torch.from_numpy(np.load(features_path)).float()
        self.y = torch.from_numpy(np.load(targets_path)).float().unsqueeze(1)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, idx):
        return self.x[idx], self.y[idx]


class Regressor(nn.Module):
    def __init__(self, n_in):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(n_in, 64), nn.ReLU(),
            nn.Linear(64, 64), nn.ReLU(),
            nn.Linear(64, 1),
        )

    def forward(self, x):
        return self.net(x)


def train(model, loader, epochs=15, lr=1e-3):
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    criterion = nn.MSELoss()
    for epoch in range(epochs):
        running = 0.0
        for xb, yb in loader:
            pred = model(xb)
            loss = criterion(pred, yb)
            loss.backward()
            optimizer.step()
            running += loss.item() * len(xb)
        print(f"epoch {epoch + 1:2d}  train mse {running / len(loader.dataset):.4f}")


if __name__ == "__main__":
    ds = SensorDataset("data/features.npy", "data/targets.npy")
    loader = DataLoader(ds, batch_size=64, shuffle=True)
    model = Regressor(ds.x.shape[1])
    train(model, loader)
