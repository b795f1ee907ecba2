"""Training gives logits to CrossEntropyLoss; validation does the same; softmax only for the probabilities it prints."""
import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(5)
x = torch.randn(900, 12)
y = (x[:, :4].sum(1) > 0).long() + (x[:, 4] > 0.5).long()
train_x, train_y, val_x, val_y = x[:700], y[:700], x[700:], y[700:]

classifier = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 3))
optimizer = torch.optim.Adam(classifier.parameters(), lr=3e-3)


def evaluate():
    classifier.eval()
    total = 0.0
    with torch.no_grad():
        for i in range(0, 200, 50):
            logits = classifier(val_x[i:i + 50])
            total += F.cross_entropy(logits, val_y[i:i + 50]).item()
    classifier.train()
    return total / 4


for epoch in range(6):
    for i in range(0, 650, 50):  # 13 steps an epoch
        optimizer.zero_grad()
        F.cross_entropy(classifier(train_x[i:i + 35]), train_y[i:i + 35]).backward()
        optimizer.step()
    print(epoch, round(evaluate(), 3))
