# The 20-layer tanh MLP with Xavier initialisation (scaled to the layer width) and gradient clipping.
import torch
from torch import nn

torch.manual_seed(0)
x = torch.randn(1024, 16)
y = torch.tanh(x[:, :4].sum(1, keepdim=True))

layers = [nn.Linear(16, 64), nn.Tanh()]
for _ in range(19):
    layers += [nn.Linear(64, 64), nn.Tanh()]
model = nn.Sequential(*layers, nn.Linear(64, 1))
for m in model.modules():
    if isinstance(m, nn.Linear):
        nn.init.xavier_normal_(m.weight, gain=nn.init.calculate_gain("tanh"))
        nn.init.zeros_(m.bias)

optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
loss_fn = nn.MSELoss()
for step in range(60):
    idx = torch.randint(0, 1024, (32,))
    optimizer.zero_grad()
    loss = loss_fn(model(x[idx]), y[idx])
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    optimizer.step()
    if step % 20 == 0:
        print(f"step {step}: loss {loss.item():.4g}")
