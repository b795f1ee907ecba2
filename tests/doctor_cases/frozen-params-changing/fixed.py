# Train a whole MLP, then freeze its first layers to tune the head alone, keeping the same AdamW optimizer:
# optimizer.zero_grad() sets the gradients to None, so the frozen weights (still in the optimizer) are skipped
# by AdamW and stay exactly as they were.
import torch
import torch.nn.functional as F
from sklearn.datasets import load_digits
from torch import nn

torch.manual_seed(0)
digits = load_digits()
x = torch.tensor(digits.data, dtype=torch.float32) / 16.0
y = torch.tensor(digits.target)

model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.05)
for epoch in range(4):
    if epoch == 2:
        for p in model[:4].parameters():  # freeze the features, tune the head
            p.requires_grad = False
    for idx in torch.randperm(1500).split(100):
        loss = F.cross_entropy(model(x[idx]), y[idx])
        optimizer.zero_grad()  # gradients to None: the frozen ones are skipped
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch} loss {loss.item():.3f}")
