# A small causal transformer gets a float attention mask full of -inf as a second argument: correct.
import torch
from torch import nn


class TinyCausal(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.inp = nn.Linear(1, d)
        layer = nn.TransformerEncoderLayer(d, nhead=2, dim_feedforward=32, dropout=0.0, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, num_layers=1, enable_nested_tensor=False)
        self.out = nn.Linear(d, 1)

    def forward(self, x, mask):
        return self.out(self.enc(self.inp(x), mask=mask))


torch.manual_seed(0)
T = 12
t = torch.linspace(0, 6.28, 200)
waves = torch.stack([torch.sin(t * f + p) for f, p in zip(torch.rand(64) + 0.5, torch.rand(64) * 3)])
mask = nn.Transformer.generate_square_subsequent_mask(T)  # float mask: 0 and -inf
model = TinyCausal()
opt = torch.optim.Adam(model.parameters(), lr=3e-3)
for step in range(60):
    start = torch.randint(0, 200 - T - 1, (1,)).item()
    seq = waves[:, start:start + T + 1, None]
    pred = model(seq[:, :-1], mask)
    loss = nn.functional.mse_loss(pred, seq[:, 1:])
    opt.zero_grad()
    loss.backward()
    opt.step()
print("loss", loss.item())
