# expect: wrong-loss-for-task
# nn.NLLLoss used on raw linear outputs (no log_softmax): the "loss" is just minus the true-class
# score, unbounded below, so training pushes scores apart without learning a proper classifier.
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset, random_split
from sklearn.datasets import make_classification

torch.manual_seed(2)
torch.set_num_threads(1)

X, y = make_classification(n_samples=1500, n_features=16, n_informative=8, n_classes=4,
                           n_clusters_per_class=2, class_sep=1.2, random_state=2)
full = TensorDataset(torch.tensor(X, dtype=torch.float32), torch.tensor(y))
train_set, test_set = random_split(full, [1200, 300], generator=torch.Generator().manual_seed(0))
train_loader = DataLoader(train_set, batch_size=64, shuffle=True)
test_loader = DataLoader(test_set, batch_size=300)


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU())
        self.scores = nn.Linear(64, 4)

    def forward(self, x):
        return self.scores(self.hidden(x))


model_ = Classifier()
objective = nn.NLLLoss()
optim_ = torch.optim.Adam(model_.parameters(), lr=1e-3)

for epoch in range(12):
    model_.train()
    for feats, tgt in train_loader:
        optim_.zero_grad()
        loss = objective(model_(feats), tgt)
        loss.backward()
        optim_.step()
    model_.eval()
    with torch.no_grad():
        feats, tgt = next(iter(test_loader))
        acc = (model_(feats).argmax(1) == tgt).float().mean().item()
    if epoch % 3 == 2:
        print(f"epoch {epoch + 1}: loss {loss.item():.2f}  test acc {acc:.3f}")
