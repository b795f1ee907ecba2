# doctor: --nproc 2
"""DDP keeps the replicas equal: same initial weights (broadcast by DDP), averaged gradients, same steps."""
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(rank)  # different seeds per rank: DDP still starts every replica from rank 0's weights
x = torch.randn(256, 10, generator=torch.Generator().manual_seed(0))
y = (x[:, 0] - x[:, 1] > 0).long()
dataset = TensorDataset(x, y)
sampler = DistributedSampler(dataset, seed=0)
loader = DataLoader(dataset, batch_size=16, sampler=sampler)
model = DistributedDataParallel(nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Dropout(0.1), nn.Linear(32, 2)))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=1e-2)

for epoch in range(2):
    sampler.set_epoch(epoch)
    model.train()
    for xb, yb in loader:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(xb), yb).backward()
        optimizer.step()
dist.destroy_process_group()
