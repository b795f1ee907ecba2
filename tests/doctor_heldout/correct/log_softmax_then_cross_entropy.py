# expect: none
# The network ends in LogSoftmax (so it can also be used with NLLLoss elsewhere) and is trained
# with nn.CrossEntropyLoss. log_softmax is idempotent (log_softmax(log_softmax(z)) == log_softmax(z)),
# so the loss and gradients are exactly the usual ones: this is redundant, not a bug.
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from sklearn.datasets import load_digits

torch.manual_seed(3)
torch.set_num_threads(1)

X, y = load_digits(return_X_y=True)
X = torch.tensor(X / 16.0, dtype=torch.float32)
y = torch.tensor(y)
train_dl = DataLoader(TensorDataset(X[:1500], y[:1500]), batch_size=64, shuffle=True)

classifier = nn.Sequential(
    nn.Linear(64, 100), nn.ReLU(),
    nn.Linear(100, 10), nn.LogSoftmax(dim=1),
)
criterion = nn.CrossEntropyLoss()
opt = torch.optim.RMSprop(classifier.parameters(), lr=1e-3)

for epoch in range(6):
    for xb, yb in train_dl:
        opt.zero_grad()
        loss = criterion(classifier(xb), yb)
        loss.backward()
        opt.step()
    with torch.no_grad():
        acc = (classifier(X[1500:]).argmax(1) == y[1500:]).float().mean().item()
    print(f"epoch {epoch}: loss {loss.item():.4f}  test acc {acc:.3f}")
