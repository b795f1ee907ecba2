# expect: model-definition
# source: https://www.engineermaxxing.com/micro/lessons/pytorch-internals.html
# MyModel keeps its two Linear layers in a plain Python list: model.parameters() is empty and the optimizer refuses it.
import torch
import torch.nn as nn


class MyModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = [nn.Linear(64, 32), nn.Linear(32, 10)]

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


model = MyModel()
print(list(model.parameters()))
x = torch.randn(128, 64)
y = torch.randint(0, 10, (128,))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(50):
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
