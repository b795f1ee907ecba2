# expect: zero-grad-missing
# source: https://runebook.dev/en/docs/pytorch/generated/torch.optim.optimizer.step
# The page's "what not to do" loop: for data, target in train_loader -> forward, loss, backward, optimizer.step(), never zero_grad().
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
X = torch.randn(2048, 20)
y = (X[:, :3].sum(dim=1) > 0).long()
train_loader = DataLoader(TensorDataset(X, y), batch_size=64, shuffle=True)

model = nn.Sequential(nn.Linear(20, 50), nn.ReLU(), nn.Linear(50, 2))
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
for epoch in range(5):
    for data, target in train_loader:
        output = model(data)
        loss = criterion(output, target)
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
