# Fine-tuning a pretrained MLP: pretrained on the first 700 images of digits 0-4 and saved, then loaded and trained
# further on the next 800 with SGD at a rate suited to fine-tuning (0.01): the loss stays near where it started.
import io

import torch
import torch.nn.functional as F
from sklearn.datasets import load_digits
from torch import nn

torch.manual_seed(0)
digits = load_digits()
x = torch.tensor(digits.data, dtype=torch.float32) / 16.0
y = torch.tensor(digits.target)


def make_net(classes: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, classes))


net = make_net(5)
pre = torch.optim.Adam(net.parameters(), lr=1e-2)
small = y[:700] < 5
for step in range(15):
    loss = F.cross_entropy(net(x[:700][small]), y[:700][small])
    pre.zero_grad()
    loss.backward()
    pre.step()
buffer = io.BytesIO()
torch.save(net.state_dict(), buffer)

model = make_net(5)
buffer.seek(0)
model.load_state_dict(torch.load(buffer, weights_only=True))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
rows = 700 + torch.nonzero(y[700:1500] < 5).squeeze(1)
for epoch in range(3):
    for idx in rows[torch.randperm(len(rows))].split(50):
        loss = F.cross_entropy(model(x[idx]), y[idx])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch} loss {loss.item():.3f}")
