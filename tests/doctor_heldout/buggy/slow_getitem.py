# expect: dataloader-bottleneck
# __getitem__ "loads from disk" (time.sleep) with num_workers=0: the loop starves.
import time
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import Dataset, DataLoader

torch.set_num_threads(1)
torch.manual_seed(0)


class SlowDataset(Dataset):
    def __init__(self, n=480):
        self.x = torch.randn(n, 16)
        self.y = (self.x[:, 0] > 0).long()

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        time.sleep(0.008)               # pretend to decode a file
        return self.x[i], self.y[i]


model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 2))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
loader = DataLoader(SlowDataset(), batch_size=16, shuffle=True)
for epoch in range(1):
    for step, (x, y) in enumerate(loader):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        if step % 10 == 0:
            print(step, loss.item())
