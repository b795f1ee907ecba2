# expect: none
# Multi-label tagging: each digit image gets 3 independent binary tags (even, >= 5, prime).
# Float multi-hot targets with BCEWithLogitsLoss on raw logits; probabilities via sigmoid only
# at prediction time.
import torch
import torch.nn as nn
from sklearn.datasets import load_digits

torch.manual_seed(0)
torch.set_num_threads(1)

d = load_digits()
x = torch.tensor(d.data, dtype=torch.float32) / 16.0
digit = torch.tensor(d.target)
tags = torch.stack([digit % 2 == 0, digit >= 5, torch.isin(digit, torch.tensor([2, 3, 5, 7]))], dim=1).float()

tagger = nn.Sequential(nn.Linear(64, 96), nn.ReLU(), nn.Linear(96, 3))
loss_fn = nn.BCEWithLogitsLoss()
opt = torch.optim.Adam(tagger.parameters(), lr=2e-3)

n_tr = 1400
for epoch in range(10):
    perm = torch.randperm(n_tr)
    for i in range(0, n_tr, 40):
        b = perm[i:i + 40]
        opt.zero_grad()
        loss = loss_fn(tagger(x[b]), tags[b])
        loss.backward()
        opt.step()
    if epoch % 3 == 2 or epoch == 9:
        with torch.no_grad():
            probs = torch.sigmoid(tagger(x[n_tr:]))
            per_tag = ((probs > 0.5).float() == tags[n_tr:]).float().mean(0)
        print(f"epoch {epoch + 1}: loss {loss.item():.4f}  tag acc {[round(v, 3) for v in per_tag.tolist()]}")
