# Breast-cancer classifier with a validation pass after every epoch. The model is put in eval
# mode, but the pass runs with gradients on and the validation loss is summed as a tensor, so
# every validation batch's graph stays alive until the next epoch's pass starts.
import torch
from sklearn.datasets import load_breast_cancer
from torch import nn
from torch.utils.data import DataLoader, TensorDataset, random_split

torch.manual_seed(1)
raw = load_breast_cancer()
x = torch.tensor(raw.data, dtype=torch.float32)
x = (x - x.mean(0)) / x.std(0)
y = torch.tensor(raw.target, dtype=torch.long)
train_set, val_set = random_split(TensorDataset(x, y), [449, 120], generator=torch.Generator().manual_seed(1))
train_loader = DataLoader(train_set, batch_size=16, shuffle=True)
val_loader = DataLoader(val_set, batch_size=8)

net = nn.Sequential(nn.Linear(30, 32), nn.Tanh(), nn.Dropout(0.2), nn.Linear(32, 2))
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)

for epoch in range(1, 6):
    net.train()
    for features, labels in train_loader:
        optimizer.zero_grad()
        criterion(net(features), labels).backward()
        optimizer.step()

    net.eval()
    val_loss, hits = 0.0, 0
    for features, labels in val_loader:
        logits = net(features)
        val_loss = val_loss + criterion(logits, labels) * len(labels)  # bug: no torch.no_grad(), a tensor sum
        hits += int((logits.argmax(1) == labels).sum())
    print(f"epoch {epoch}: val loss {val_loss.item() / len(val_set):.4f}, val acc {hits / len(val_set):.3f}")
