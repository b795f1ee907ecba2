# A custom module: dropout but no activation between fc1 and fc2 (synthetic data, functional loss).
import torch
from torch import nn

torch.manual_seed(0)
x = torch.randn(1024, 20)
y = ((x[:, 0] * x[:, 1]) > 0).long()


class Classifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(20, 64)
        self.drop = nn.Dropout(0.1)
        self.fc2 = nn.Linear(64, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.fc1(x)
        x = self.drop(x)  # bug: forgot the activation
        return self.fc2(x)


model = Classifier()
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

for epoch in range(3):
    for i in range(0, 1024, 64):
        model.zero_grad()
        loss = nn.functional.cross_entropy(model(x[i:i + 64]), y[i:i + 64])
        loss.backward()
        opt.step()
    print(f"epoch {epoch} loss {loss.item():.3f}")
