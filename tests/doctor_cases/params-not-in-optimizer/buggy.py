# The model is built again ("fresh weights for this run") after the optimizer was created,
# so the optimizer still holds the first model's parameters.
import torch
from torch import nn

torch.manual_seed(0)
x = torch.randn(512, 20)
y = (x[:, :2].sum(1) > 0).long()


def make_model() -> nn.Module:
    return nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 2))


model = make_model()
opt = torch.optim.SGD(model.parameters(), lr=0.05)
loss_fn = nn.CrossEntropyLoss()
model = make_model()  # bug: re-created after the optimizer

for epoch in range(3):
    for i in range(0, 512, 32):
        opt.zero_grad()
        loss = loss_fn(model(x[i:i + 32]), y[i:i + 32])
        loss.backward()
        opt.step()
    print(f"epoch {epoch} loss {loss.item():.3f}")
