# doctor: --nproc 2
"""An IterableDataset under DDP that keeps every world_size-th sample for its rank."""
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
        rank, world = dist.get_rank(), dist.get_world_size()
        for i in range(self.n):
            x = torch.randn(8, generator=g)
            if i % world == rank:
                yield x, x.sum().unsqueeze(0)


dist.init_process_group(backend="gloo")
torch.manual_seed(0)
model = DistributedDataParallel(nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1)))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for xb, yb in DataLoader(Stream(640), batch_size=32):
    optimizer.zero_grad()
    nn.functional.mse_loss(model(xb), yb).backward()
    optimizer.step()
dist.destroy_process_group()
