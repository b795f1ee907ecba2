# expect: softmax-before-cross-entropy
# The model's forward ends in softmax "to get probabilities", then nn.CrossEntropyLoss.
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
        self.fc1 = nn.Linear(64, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        return F.softmax(self.fc2(x), dim=1)


d = load_digits()
ds = TensorDataset(torch.tensor(d.data / 16.0, dtype=torch.float32), torch.tensor(d.target))
loader = DataLoader(ds, batch_size=64, shuffle=True)
model = Net()
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(3):
    for i, (x, y) in enumerate(loader):
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
    print("epoch", epoch, loss.item())
