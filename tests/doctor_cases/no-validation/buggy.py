# Multi-label tagging of synthetic "documents": five tags per row, trained full-batch style in mini-batches over
# every row; the accuracy printed each epoch is computed on the first 200 rows, which are training rows.
import numpy as np
import torch
from torch import nn

rng = np.random.default_rng(7)
features = rng.normal(size=(1200, 20)).astype("float32")
mixing = rng.normal(size=(20, 5)).astype("float32")
tags = (features @ mixing + 0.3 * rng.normal(size=(1200, 5)) > 0.5).astype("float32")
X = torch.from_numpy(features)
Y = torch.from_numpy(tags)

tagger = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 5))
optimizer = torch.optim.Adam(tagger.parameters(), lr=1e-3)
criterion = nn.BCEWithLogitsLoss()
for epoch in range(8):
    tagger.train()
    for start in range(0, len(X), 100):
        xb, yb = X[start:start + 100], Y[start:start + 100]
        optimizer.zero_grad()
        loss = criterion(tagger(xb), yb)
        loss.backward()
        optimizer.step()
    tagger.eval()
    with torch.no_grad():
        predicted = (torch.sigmoid(tagger(X[:200])) > 0.5).float()
        accuracy = (predicted == Y[:200]).float().mean().item()
    print(f"epoch {epoch}: loss {loss.item():.3f} accuracy {accuracy:.3f}")
