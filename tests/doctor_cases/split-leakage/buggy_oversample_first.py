# Imbalanced "fraud" table (about one row in ten positive). The positives are copied ten times to balance
# the classes *before* the train / validation split, so copies of the same positive rows land on
# both sides and the validation recall looks far better than it is.
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset, random_split

gen = torch.Generator().manual_seed(21)
torch.manual_seed(21)
n = 3000
features = torch.randn(n, 12, generator=gen)
score = features[:, 0] * 1.5 - features[:, 3] + 0.8 * features[:, 7] * features[:, 2]
labels = (score + 0.7 * torch.randn(n, generator=gen) > 2.6).long()

positives = torch.nonzero(labels == 1).squeeze(1)
balanced_idx = torch.cat([torch.arange(n), positives.repeat(9)])  # each positive row 10 times in all
dataset = TensorDataset(features[balanced_idx], labels[balanced_idx])
train_part, val_part = random_split(dataset, [0.8, 0.2], generator=gen)  # bug: split after oversampling

model = nn.Sequential(nn.Linear(12, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 2))
optim = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=1e-4)
train_loader = DataLoader(train_part, batch_size=64, shuffle=True, generator=gen)
val_loader = DataLoader(val_part, batch_size=256)

for epoch in range(5):
    model.train()
    for xb, yb in train_loader:
        optim.zero_grad()
        nn.functional.cross_entropy(model(xb), yb).backward()
        optim.step()
    model.eval()
    true_pos = actual_pos = 0
    with torch.no_grad():
        for xb, yb in val_loader:
            pred = model(xb).argmax(1)
            true_pos += int(((pred == 1) & (yb == 1)).sum())
            actual_pos += int((yb == 1).sum())
    print(f"epoch {epoch}: validation recall {true_pos / max(actual_pos, 1):.3f}")
