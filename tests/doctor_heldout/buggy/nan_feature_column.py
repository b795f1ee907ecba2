# expect: nonfinite-input
# One feature column has missing values (NaN) that were never imputed.
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import Dataset, DataLoader

torch.set_num_threads(1)
torch.manual_seed(0)
rng = np.random.default_rng(0)

table = rng.normal(size=(800, 6)).astype(np.float32)
target = (table[:, 0] * 1.5 - table[:, 2]).astype(np.float32)
missing = rng.random(800) < 0.05
table[missing, 4] = np.nan                 # "age" column with blanks in the CSV


class TabularDataset(Dataset):
    def __init__(self, x, y):
        self.x = torch.from_numpy(x)
        self.y = torch.from_numpy(y).unsqueeze(1)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, idx):
        return self.x[idx], self.y[idx]


loader = DataLoader(TabularDataset(table, target), batch_size=32, shuffle=True)
model = nn.Sequential(nn.Linear(6, 32), nn.ReLU(), nn.Linear(32, 1))
loss_fn = nn.MSELoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(3):
    for xb, yb in loader:
        optimizer.zero_grad()
        loss = loss_fn(model(xb), yb)
        loss.backward()
        optimizer.step()
    print("epoch", epoch, "loss", loss.item())
