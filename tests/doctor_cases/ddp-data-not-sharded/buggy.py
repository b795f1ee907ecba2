# doctor: --nproc 2
"""DDP training where each process builds a plain shuffled DataLoader: every rank reads the whole dataset."""
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset

dist.init_process_group("gloo")
torch.manual_seed(0)
x = torch.randn(256, 10)
y = (x[:, 0] > 0).long()
loader = DataLoader(TensorDataset(x, y), batch_size=16, shuffle=True)
model = DDP(nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 2)))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)

for epoch in range(2):
    for xb, yb in loader:
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(xb), yb)
        loss.backward()
        optimizer.step()
    if dist.get_rank() == 0:
        print(f"epoch {epoch}: loss {loss.item():.3f}")
dist.destroy_process_group()
