# expect: none
# Sequence classifier with an LSTM (sigmoid / tanh gates), batch_first, trained for a few epochs.
import torch
from torch import nn


class SeqClf(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(5, 32, batch_first=True)
        self.fc = nn.Linear(32, 2)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.fc(out[:, -1])


torch.manual_seed(0)
x = torch.randn(128, 15, 5)
y = (x[:, :, 0].sum(1) > 0).long()
model = SeqClf()
opt = torch.optim.Adam(model.parameters(), lr=3e-3)
for epoch in range(25):
    for i in range(0, 128, 32):
        opt.zero_grad()
        nn.functional.cross_entropy(model(x[i:i + 32]), y[i:i + 32]).backward()
        opt.step()
