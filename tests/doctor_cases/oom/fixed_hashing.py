# The hashing trick: raw product ids are folded into a fixed number of buckets.
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

BUCKETS = 4096


class Purchases(Dataset):
    def __init__(self, n: int = 512) -> None:
        g = torch.Generator().manual_seed(0)
        self.products = torch.randint(0, 10**17, (n, 5), generator=g)
        self.spend = self.products.remainder(7).float().mean(1)

    def __len__(self) -> int:
        return len(self.spend)

    def __getitem__(self, i: int):
        return self.products[i].remainder(BUCKETS), self.spend[i]


torch.manual_seed(0)
model = nn.Sequential(nn.EmbeddingBag(BUCKETS, 8, mode="mean"), nn.Linear(8, 1))
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(3):
    for baskets, spend in DataLoader(Purchases(), batch_size=32, shuffle=True):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(baskets).squeeze(1), spend)
        loss.backward()
        opt.step()
print("done", loss.item())
