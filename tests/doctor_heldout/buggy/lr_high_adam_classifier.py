# expect: lr-too-high
# Adam with lr=1.0 (meant 1e-3) on a digits classifier.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
from sklearn.datasets import load_digits

torch.set_num_threads(1)
torch.manual_seed(0)

d = load_digits()
loader = DataLoader(TensorDataset(torch.tensor(d.data / 16.0, dtype=torch.float32),
                                  torch.tensor(d.target)), batch_size=32, shuffle=True)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(64, 128)
        self.b = nn.Linear(128, 128)
        self.c = nn.Linear(128, 10)

    def forward(self, x):
        return self.c(F.relu(self.b(F.relu(self.a(x)))))


model = Net()
optimizer = torch.optim.Adam(model.parameters(), lr=1.0)
for epoch in range(2):
    for step, (x, y) in enumerate(loader):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        if step % 20 == 0:
            print(epoch, step, loss.item())
