# expect: zero-grad-missing
# Forum classic: training loop in a function, optimizer.zero_grad() simply forgotten.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import Dataset, DataLoader
from sklearn.datasets import load_digits

torch.set_num_threads(1)
torch.manual_seed(0)


class DigitsDataset(Dataset):
    def __init__(self):
        d = load_digits()
        self.x = torch.tensor(d.data / 16.0, dtype=torch.float32)
        self.y = torch.tensor(d.target, dtype=torch.long)

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def train(model, loader, optimizer, epochs):
    criterion = nn.CrossEntropyLoss()
    for epoch in range(epochs):
        total = 0.0
        for i, (x, y) in enumerate(loader):
            out = model(x)
            loss = criterion(out, y)
            loss.backward()
            optimizer.step()
            total += loss.item()
        print(f"epoch {epoch} loss {total / len(loader):.4f}")


model = Net()
loader = DataLoader(DigitsDataset(), batch_size=64, shuffle=True)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
train(model, loader, optimizer, 3)
