# expect: none
# Dense autoencoder on digits (scaled to 0..1) with MSE reconstruction loss.
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from sklearn.datasets import load_digits

torch.set_num_threads(1)
torch.manual_seed(0)


class AE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 8))
        self.dec = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 64), nn.Sigmoid())

    def forward(self, x):
        return self.dec(self.enc(x))


d = load_digits()
X = torch.tensor(d.data / 16.0, dtype=torch.float32)
loader = DataLoader(TensorDataset(X), batch_size=64, shuffle=True)
model = AE()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
crit = nn.MSELoss()
for epoch in range(5):
    for (xb,) in loader:
        opt.zero_grad()
        loss = crit(model(xb), xb)
        loss.backward()
        opt.step()
    print(epoch, loss.item())
