import re
import pandas as pd
import torch
import torch.nn as nn
from torch.utils.data import Dataset, DataLoader
from sklearn.model_selection import train_test_split

MAX_LEN = 64


def tokenize(text):
    return re.findall(r"[a-z']+", text.lower())


class ReviewDataset(Dataset):
    def __init__(self, df, vocab):
        self.texts = df["review"]
        self.labels = df["sentiment"]
        self.vocab = vocab

    def __len__(self):
        return len(self.texts)

    def __getitem__(self, idx):
        ids = [self.vocab.get(w, 1) for w in tokenize(self.texts[idx])][:MAX_LEN]
        ids += [0] * (MAX_LEN - len(ids))
        return torch.tensor(ids), torch.tensor(self.labels[idx], dtype=torch.float32)


class BagOfWords(nn.Module):
    def __init__(self, vocab_size, dim=32):
        super().__init__()
        self.emb = nn.EmbeddingBag(vocab_size, dim, padding_idx=0)
        self.out = nn.Linear(dim, 1)

    def forward(self, x):
        return self.out(self.emb(x)).squeeze(1)


df = pd.read_csv("reviews.csv")
train_df, val_df = train_test_split(df, test_size=0.2, random_state=42)

counts = {}
for text in train_df["review"]:
    for w in tokenize(text):
        counts[w] = counts.get(w, 0) + 1
vocab = {w: i + 2 for i, w in enumerate(sorted(counts, key=counts.get, reverse=True))}

train_loader = DataLoader(ReviewDataset(train_df, vocab), batch_size=32, shuffle=True)
val_loader = DataLoader(ReviewDataset(val_df, vocab), batch_size=32)

model = BagOfWords(len(vocab) + 2)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
loss_fn = nn.BCEWithLogitsLoss()

for epoch in range(5):
    model.train()
    for x, y in train_loader:
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
    print(f"epoch {epoch}: loss {loss.item():.4f}")
