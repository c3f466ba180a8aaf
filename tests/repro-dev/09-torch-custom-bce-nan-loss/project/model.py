import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(10, 32)
        self.fc2 = nn.Linear(32, 1)

    def forward(self, x):
        return torch.sigmoid(self.fc2(torch.relu(self.fc1(x))))


def bce(p, y):
    return -(y * torch.log(p) + (1 - y) * torch.log(1 - p)).mean()


model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)

for epoch in range(10):
    optimizer.zero_grad()
    p = model(X_train)
    loss = bce(p, y_train)
    loss.backward()
    optimizer.step()
    print(f"epoch {epoch} loss {loss.item()}")
