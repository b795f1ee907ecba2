# expect: data-not-shuffled (known miss)
# source: https://github.com/zalandoresearch/fashion-mnist/pull/5
# The original Fashion-MNIST files were sorted by label (all 0s, then all 1s, ...); a user who does not shuffle trains on single-class mini-batches and the learning fails.
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
prototypes = torch.rand(10, 784)
labels = torch.arange(10).repeat_interleave(300)          # sorted: 0s first, then 1s, ...
images = (prototypes[labels] + 0.4 * torch.rand(3000, 784)).clamp(0, 1)
train_loader = DataLoader(TensorDataset(images, labels), batch_size=100)

model = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loss_fn = nn.CrossEntropyLoss()
for epoch in range(3):
    for x, y in train_loader:
        loss = loss_fn(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        acc = (model(images).argmax(1) == labels).float().mean().item()
    print(epoch, loss.item(), acc)
