from torch import nn


class IntentClassifier(nn.Module):
    def __init__(self, dim=20, n_classes=5):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(dim, 64), nn.ReLU(), nn.Dropout(0.1), nn.Linear(64, n_classes))

    def forward(self, x):
        return self.body(x)
