# expect: zero-grad-missing
# source: https://github.com/IBM/aihwkit/issues/446
# The library's "simple layer" example: one 4->2 layer fitted to two samples, opt.step() every iteration without opt.zero_grad(); over 10 iterations the loss falls and then rises again.
import torch
from torch import Tensor
from torch.nn import Linear
from torch.nn.functional import mse_loss
from torch.optim import SGD

x = Tensor([[0.1, 0.2, 0.4, 0.3], [0.2, 0.1, 0.1, 0.3]])
y = Tensor([[1.0, 0.5], [0.7, 0.3]])

torch.manual_seed(4321)
model = Linear(4, 2)
opt = SGD(model.parameters(), lr=0.1)

for epoch in range(100):
    pred = model(x)
    loss = mse_loss(pred, y)
    loss.backward()
    opt.step()
    print("Loss error: {:.16f}".format(loss))
