# expect: none
# source: https://velog.io/@rhss10/기본-optimizer.zerograd는-어디에-넣어주어야-할까
# "Where should optimizer.zero_grad() go?": the post's loop clears the gradients last, after optimizer.step() and scheduler.step(), which is fine.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
X = torch.randn(1024, 16)
labels = (X[:, 0] + X[:, 1] * X[:, 2] > 0).long()
train_batch = DataLoader(TensorDataset(X, labels), batch_size=32, shuffle=True)


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 2))

    def forward(self, inputs, labels):
        logits = self.body(inputs)
        return F.cross_entropy(logits, labels), logits


model = Classifier()
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: 1.0 - s / 400)
for epoch in range(4):
    for inputs, y in train_batch:
        loss, logits = model(inputs, y)
        loss.backward()
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
    print(epoch, loss.item())
