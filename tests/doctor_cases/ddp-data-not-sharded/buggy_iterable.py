# doctor: --nproc 2
"""An IterableDataset under DDP that does not split its stream per rank: both ranks read the same samples."""
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, IterableDataset


class Stream(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        g = torch.Generator().manual_seed(1)
        for _ in range(self.n):
            x = torch.randn(8, generator=g)
            yield x, x.sum().unsqueeze(0)


dist.init_process_group(backend="gloo")
torch.manual_seed(0)
model = DistributedDataParallel(nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1)))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for xb, yb in DataLoader(Stream(320), batch_size=32):
    optimizer.zero_grad()
    nn.functional.mse_loss(model(xb), yb).backward()
    optimizer.step()
dist.destroy_process_group()
