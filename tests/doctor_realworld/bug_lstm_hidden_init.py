# expect: shape-mismatch (mentions batch_first)
# "RuntimeError: Expected hidden[0] size ... got ..." - sensor windows (batch, time, channels), no batch_first.
import torch
from torch import nn


class SensorNet(nn.Module):
    def __init__(self, n_features=6, hidden=32, n_classes=4):
        super().__init__()
        self.hidden = hidden
        self.lstm = nn.LSTM(n_features, hidden)
        self.head = nn.Linear(hidden, n_classes)

    def forward(self, x):
        h0 = torch.zeros(1, x.size(0), self.hidden)
        c0 = torch.zeros(1, x.size(0), self.hidden)
        out, _ = self.lstm(x, (h0, c0))
        return self.head(out[:, -1, :])


torch.manual_seed(0)
windows = torch.randn(64, 50, 6)  # (batch, time, channels)
labels = torch.randint(0, 4, (64,))
net = SensorNet()
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
for epoch in range(5):
    opt.zero_grad()
    loss = nn.CrossEntropyLoss()(net(windows), labels)
    loss.backward()
    opt.step()
