# expect: model-definition
# source: https://github.com/kolyakr/d2l
# A d2l exercise answer: MySequential stores its blocks in a plain list (self.modules = []), so the net has no registered parameters to train.
import torch
from torch import nn


class MySequential(nn.Module):
    def __init__(self, *args):
        super().__init__()
        self.modules = []
        for idx, module in enumerate(args):
            self.modules.append(module)

    def forward(self, X):
        for module in self.modules:
            X = module(X)
        return X


net = MySequential(nn.Linear(20, 256), nn.ReLU(), nn.Linear(256, 10))
X = torch.rand(64, 20)
y = torch.randint(0, 10, (64,))
print(net(X).shape)
trainer = torch.optim.SGD(net.parameters(), lr=0.1)
for epoch in range(20):
    l = nn.functional.cross_entropy(net(X), y)
    trainer.zero_grad()
    l.backward()
    trainer.step()
