# The Embedding table is sized from the largest raw product id (about 10**17): creating the
# layer asks for exabytes of memory before training even starts.
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Purchases(Dataset):
    def __init__(self, n: int = 512) -> None:
        g = torch.Generator().manual_seed(0)
        self.products = torch.randint(0, 10**17, (n, 5), generator=g)  # raw product ids per basket
        self.spend = torch.rand(n, generator=g) * 100

    def __len__(self) -> int:
        return len(self.spend)

    def __getitem__(self, i: int):
        return self.products[i], self.spend[i]


data = Purchases()
num_products = int(data.products.max()) + 1
model = nn.Sequential(nn.EmbeddingBag(num_products, 8, mode="mean"), nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
for baskets, spend in DataLoader(data, batch_size=32):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(baskets).squeeze(1), spend)
    loss.backward()
    opt.step()
