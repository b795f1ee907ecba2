# expect: sigmoid-before-bce-with-logits
# The model has a predict_proba() helper (sigmoid of the logits) and the training step reuses it
# when calling F.binary_cross_entropy_with_logits, so the sigmoid is applied twice.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
from sklearn.datasets import make_moons

torch.manual_seed(0)
torch.set_num_threads(1)


class MoonNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.f = nn.Sequential(nn.Linear(2, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 1))

    def forward(self, x):
        return self.f(x).squeeze(-1)

    def predict_proba(self, x):
        return torch.sigmoid(self(x))


X, y = make_moons(n_samples=1200, noise=0.25, random_state=1)
Xt, yt = torch.tensor(X, dtype=torch.float32), torch.tensor(y, dtype=torch.float32)
train = DataLoader(TensorDataset(Xt[:900], yt[:900]), batch_size=32, shuffle=True)

moon = MoonNet()
opt = torch.optim.Adam(moon.parameters(), lr=5e-3)

for epoch in range(25):
    for xb, yb in train:
        probs = moon.predict_proba(xb)
        loss = F.binary_cross_entropy_with_logits(probs, yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
    if epoch % 6 == 5 or epoch == 24:
        with torch.no_grad():
            acc = ((moon.predict_proba(Xt[900:]) > 0.5).float() == yt[900:]).float().mean().item()
            full = F.binary_cross_entropy(moon.predict_proba(Xt[900:]), yt[900:]).item()
        print(f"epoch {epoch + 1}: train loss {loss.item():.4f}  test bce {full:.4f}  test acc {acc:.3f}")
