# expect: none
# Gradient accumulation: zero_grad/step every 4 micro-batches, loss divided by 4.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
from sklearn.datasets import load_digits

torch.set_num_threads(1)
torch.manual_seed(0)

d = load_digits()
loader = DataLoader(TensorDataset(torch.tensor(d.data / 16.0, dtype=torch.float32),
                                  torch.tensor(d.target)), batch_size=16, shuffle=True)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
accum_steps = 4
for epoch in range(3):
    optimizer.zero_grad()
    for i, (x, y) in enumerate(loader):
        loss = F.cross_entropy(model(x), y) / accum_steps
        loss.backward()
        if (i + 1) % accum_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
    print(epoch, loss.item() * accum_steps)
