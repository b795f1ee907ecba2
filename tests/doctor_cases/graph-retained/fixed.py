import torch
from torch import nn

torch.manual_seed(0)
x = torch.randn(512, 20)
y = (x[:, :2].sum(1) > 0).long()
model = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
loss_fn = nn.CrossEntropyLoss()
history = []

for epoch in range(3):
    for i in range(0, 512, 32):
        opt.zero_grad()
        loss = loss_fn(model(x[i:i + 32]), y[i:i + 32])
        loss.backward()
        opt.step()
        history.append(loss.item())
    print(f"epoch {epoch} loss {sum(history[-16:]) / 16:.3f}")
