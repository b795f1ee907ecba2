# expect: none
# forward returns F.log_softmax; trained with nn.NLLLoss (the classic MNIST example style).
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
from sklearn.datasets import load_digits

torch.set_num_threads(1)
torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.fc1 = nn.Linear(16 * 4 * 4, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        return F.log_softmax(self.fc2(x), dim=1)


d = load_digits()
ds = TensorDataset(torch.tensor(d.images / 16.0, dtype=torch.float32).unsqueeze(1), torch.tensor(d.target))
loader = DataLoader(ds, batch_size=64, shuffle=True)
model = Net()
criterion = nn.NLLLoss()
optimizer = torch.optim.Adadelta(model.parameters(), lr=1.0)
for epoch in range(3):
    model.train()
    for batch_idx, (data, target) in enumerate(loader):
        optimizer.zero_grad()
        loss = criterion(model(data), target)
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
