# expect: none
# A classic shallow autoencoder with a sigmoid bottleneck (Xavier init, inputs in [0, 1]) and a
# sigmoid output trained with MSE; sigmoid units are used in their working range.
import torch
import torch.nn as nn
from sklearn.datasets import load_digits

torch.manual_seed(0)
torch.set_num_threads(1)

pix = torch.tensor(load_digits().data / 16.0, dtype=torch.float32)
train_pix, test_pix = pix[:1500], pix[1500:]


class AE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(64, 24)
        self.dec = nn.Linear(24, 64)
        for layer in (self.enc, self.dec):
            nn.init.xavier_uniform_(layer.weight)
            nn.init.zeros_(layer.bias)

    def forward(self, x):
        code = torch.sigmoid(self.enc(x))
        return torch.sigmoid(self.dec(code))


ae = AE()
opt = torch.optim.Adam(ae.parameters(), lr=5e-3)
mse = nn.MSELoss()
for epoch in range(25):
    perm = torch.randperm(len(train_pix))
    for i in range(0, len(perm), 50):
        b = train_pix[perm[i:i + 50]]
        opt.zero_grad()
        loss = mse(ae(b), b)
        loss.backward()
        opt.step()
    if epoch % 5 == 4:
        with torch.no_grad():
            print(f"epoch {epoch + 1}: train mse {loss.item():.4f}  test mse {mse(ae(test_pix), test_pix).item():.4f}")
