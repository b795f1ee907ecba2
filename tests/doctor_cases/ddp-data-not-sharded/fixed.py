# doctor: --nproc 2
"""DDP training with a DistributedSampler (and set_epoch every epoch): each rank reads its own share."""
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

dist.init_process_group("gloo")
torch.manual_seed(0)
x = torch.randn(256, 10)
y = (x[:, 0] > 0).long()
dataset = TensorDataset(x, y)
sampler = DistributedSampler(dataset, shuffle=True, seed=0)
loader = DataLoader(dataset, batch_size=16, sampler=sampler)
model = DDP(nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 2)))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)

for epoch in range(2):
    sampler.set_epoch(epoch)
    for xb, yb in loader:
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(xb), yb)
        loss.backward()
        optimizer.step()
    if dist.get_rank() == 0:
        print(f"epoch {epoch}: loss {loss.item():.3f}")
        torch.save(model.module.state_dict(), "model.pt")
dist.destroy_process_group()
