# The same LSTM classifier with the sequences permuted to (batch, time, features).
import torch
from torch import nn

torch.manual_seed(0)
n, feats, steps = 256, 6, 20
x = torch.randn(n, feats, steps)
y = (x[:, 0].mean(1) > 0).long()
x = x.permute(0, 2, 1).contiguous()  # (batch, time, features)


class Tagger(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lstm = nn.LSTM(feats, 32, batch_first=True)
        self.head = nn.Linear(32, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.lstm(x)
        return self.head(out[:, -1])


model = Tagger()
opt = torch.optim.Adam(model.parameters(), lr=3e-3)
for epoch in range(3):
    for i in range(0, n, 32):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x[i:i + 32]), y[i:i + 32])
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
print("done", loss.item())
