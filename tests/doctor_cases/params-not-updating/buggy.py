# The learning rate is computed from the batch size with integer division and ends up 0.
import torch
from torch import nn

torch.manual_seed(0)
x = torch.randn(512, 20)
y = (x[:, :2].sum(1) > 0).long()
model = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 2))
batch_size = 32
lr = 0.1 * (batch_size // 256)  # meant to scale the lr with the batch size
opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
loss_fn = nn.CrossEntropyLoss()

for epoch in range(3):
    for i in range(0, 512, batch_size):
        opt.zero_grad()
        loss = loss_fn(model(x[i:i + batch_size]), y[i:i + batch_size])
        loss.backward()
        opt.step()
    print(f"epoch {epoch} loss {loss.item():.3f}")
