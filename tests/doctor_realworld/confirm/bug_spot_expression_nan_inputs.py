# expect: nonfinite-input
# source: https://github.com/ratschlab/DeepSpot/issues/9
# Spatial-transcriptomics regressor (image-tile embeddings -> gene expression): empty spots leave NaN in the input embeddings, and every epoch prints "Train loss: nan".
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

rng = np.random.default_rng(0)
n_spots, emb_dim, n_genes = 1500, 128, 50
tiles = rng.normal(size=(n_spots, emb_dim)).astype(np.float32)
expr = np.log1p(np.abs(tiles[:, :n_genes] @ rng.normal(size=(n_genes, n_genes)) * 0.3)).astype(np.float32)
empty = rng.choice(n_spots, 20, replace=False)
tiles[empty] = np.nan            # spots with no tissue: embedding is NaN
train_loader = DataLoader(TensorDataset(torch.from_numpy(tiles), torch.from_numpy(expr)), batch_size=64, shuffle=True)


class DeepSpot(nn.Module):
    def __init__(self):
        super().__init__()
        self.phi = nn.Sequential(nn.Linear(emb_dim, 256), nn.ReLU(), nn.Dropout(0.2))
        self.rho = nn.Sequential(nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, n_genes))

    def forward(self, x):
        return self.rho(self.phi(x))


model = DeepSpot()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4, weight_decay=1e-6)
loss_fn = nn.MSELoss()
for epoch in range(3):
    model.train()
    total = 0.0
    for x, y in train_loader:
        loss = loss_fn(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item()
    print(f"Epoch {epoch}: Train loss: {total / len(train_loader)}")
