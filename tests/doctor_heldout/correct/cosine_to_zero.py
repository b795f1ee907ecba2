# expect: none
# CosineAnnealingLR stepped per batch down to eta_min=0 at the very end.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
from sklearn.datasets import load_digits

torch.set_num_threads(1)
torch.manual_seed(0)

d = load_digits()
loader = DataLoader(TensorDataset(torch.tensor(d.data / 16.0, dtype=torch.float32),
                                  torch.tensor(d.target)), batch_size=64, shuffle=True)
model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
epochs = 4
sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs * len(loader), eta_min=0.0)
for epoch in range(epochs):
    for x, y in loader:
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        sched.step()
    print(epoch, loss.item(), sched.get_last_lr())
