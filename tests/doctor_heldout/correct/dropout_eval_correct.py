# expect: none
# Dropout model; evaluate() switches to eval and the loop switches back to train.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
from sklearn.datasets import load_digits

torch.set_num_threads(1)
torch.manual_seed(0)

d = load_digits()
X = torch.tensor(d.data / 16.0, dtype=torch.float32)
Y = torch.tensor(d.target)
train_loader = DataLoader(TensorDataset(X[:1400], Y[:1400]), batch_size=64, shuffle=True)
val_loader = DataLoader(TensorDataset(X[1400:], Y[1400:]), batch_size=128)

model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Dropout(0.5), nn.Linear(128, 10))


def evaluate(model, loader):
    model.eval()
    correct = 0
    with torch.no_grad():
        for x, y in loader:
            correct += (model(x).argmax(1) == y).sum().item()
    return correct / len(loader.dataset)


opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(4):
    model.train()
    for x, y in train_loader:
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    print(epoch, evaluate(model, val_loader))
