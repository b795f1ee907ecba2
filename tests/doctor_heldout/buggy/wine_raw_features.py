# expect: unnormalized-input
# Wine chemistry features fed at their raw scale (proline ~300-1700, magnesium ~70-160,
# other columns ~0.1-10): the scaler was imported but never applied.
import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
from sklearn.datasets import load_wine
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler  # noqa: F401  (meant to use it)

torch.manual_seed(5)
torch.set_num_threads(1)

X, y = load_wine(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=1, stratify=y)

train_loader = DataLoader(
    TensorDataset(torch.tensor(X_train, dtype=torch.float32), torch.tensor(y_train)),
    batch_size=16, shuffle=True)
X_test_t = torch.tensor(X_test, dtype=torch.float32)
y_test_t = torch.tensor(y_test)


class WineNet(nn.Module):
    def __init__(self, d_in=13, hidden=32, n_cls=3):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.head = nn.Linear(hidden, n_cls)

    def forward(self, x):
        return self.head(self.body(x))


wine_net = WineNet()
adam = torch.optim.Adam(wine_net.parameters(), lr=1e-3)
ce = nn.CrossEntropyLoss()

for epoch in range(30):
    wine_net.train()
    epoch_loss = 0.0
    for xb, yb in train_loader:
        adam.zero_grad()
        loss = ce(wine_net(xb), yb)
        loss.backward()
        adam.step()
        epoch_loss += loss.item() * xb.size(0)
    if (epoch + 1) % 10 == 0:
        wine_net.eval()
        with torch.no_grad():
            acc = (wine_net(X_test_t).argmax(1) == y_test_t).float().mean().item()
        print(f"epoch {epoch + 1}: train loss {epoch_loss / len(X_train):.4f}, test acc {acc:.3f}")
