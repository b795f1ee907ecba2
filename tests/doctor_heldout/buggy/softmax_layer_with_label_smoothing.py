# expect: softmax-before-cross-entropy
# nn.Softmax(dim=1) left as the last layer of the Sequential (the model is also exported for
# inference), and trained with nn.CrossEntropyLoss(label_smoothing=0.1), which applies its own
# log-softmax: the gradients are squashed and training crawls.
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from sklearn.datasets import make_classification

torch.manual_seed(0)
torch.set_num_threads(1)

X, y = make_classification(n_samples=3000, n_features=30, n_informative=15, n_classes=6,
                           n_clusters_per_class=1, class_sep=1.0, random_state=8)
X = torch.tensor(X, dtype=torch.float32)
y = torch.tensor(y)
train = DataLoader(TensorDataset(X[:2400], y[:2400]), batch_size=64, shuffle=True)

policy = nn.Sequential(
    nn.Linear(30, 128), nn.ReLU(),
    nn.Linear(128, 64), nn.ReLU(),
    nn.Linear(64, 6),
    nn.Softmax(dim=1),
)
loss_fn = nn.CrossEntropyLoss(label_smoothing=0.1)
opt = torch.optim.SGD(policy.parameters(), lr=0.05, momentum=0.9)

for epoch in range(8):
    for xb, yb in train:
        opt.zero_grad()
        loss = loss_fn(policy(xb), yb)
        loss.backward()
        opt.step()
    with torch.no_grad():
        acc = (policy(X[2400:]).argmax(1) == y[2400:]).float().mean().item()
    print(f"epoch {epoch}: loss {loss.item():.4f}  val acc {acc:.3f}")
