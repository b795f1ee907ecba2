# A two-hidden-layer classifier for the scikit-learn digits, written as a module with a fit loop over a
# shuffling DataLoader, trained with Adam at lr=0.002: the loss settles near zero.
import torch
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

LR = 0.002
SEED = 5


class DigitNet(nn.Module):
    def __init__(self, hidden: int = 96) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(64, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.out = nn.Linear(hidden, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(self.body(x))


torch.manual_seed(SEED)
X, y = load_digits(return_X_y=True)
X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.2, random_state=SEED, stratify=y)
scaler = StandardScaler().fit(X_tr)
train = TensorDataset(torch.tensor(scaler.transform(X_tr), dtype=torch.float32), torch.tensor(y_tr))
X_te = torch.tensor(scaler.transform(X_te), dtype=torch.float32)
y_te = torch.tensor(y_te)

net = DigitNet()
optimizer = torch.optim.Adam(net.parameters(), lr=LR)
loss_fn = nn.CrossEntropyLoss()
for epoch in range(1, 11):
    running = 0.0
    for xb, yb in DataLoader(train, batch_size=48, shuffle=True):
        optimizer.zero_grad()
        loss = loss_fn(net(xb), yb)
        loss.backward()
        optimizer.step()
        running += loss.item() * len(yb)
    with torch.no_grad():
        accuracy = (net(X_te).argmax(1) == y_te).float().mean().item()
    print(f"epoch {epoch:2d}  train loss {running / len(train):.4f}  test accuracy {accuracy:.3f}")
