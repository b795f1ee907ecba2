# expect: softmax-before-cross-entropy
# source: https://discuss.pytorch.org/t/loss-function-for-multi-class-with-probabilities-as-output/60866
# One-hot targets turned into labels with torch.max for CrossEntropyLoss, while the output layer still applies its own softmax ("I was adding an extra logit transformation to the output layer").
import torch
import torch.nn as nn

torch.manual_seed(0)
C = 3
inputs = torch.randn(480, 6)
labels_idx = (inputs[:, 0] > 0.4).long() + (inputs[:, 1] > 0.4).long()
targets = torch.nn.functional.one_hot(labels_idx, C).to(torch.int32)


def one_hot_ce_loss(outputs, targets):
    criterion = nn.CrossEntropyLoss()
    _, labels = torch.max(targets, dim=1)
    return criterion(outputs, labels)


model = nn.Sequential(nn.Linear(6, 24), nn.ReLU(), nn.Linear(24, C), nn.Softmax(dim=1))
optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
for epoch in range(40):
    for i in range(0, 480, 48):
        outputs = model(inputs[i:i + 48])
        loss = one_hot_ce_loss(outputs, targets[i:i + 48])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
print(loss.item())
