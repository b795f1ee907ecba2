# expect: zero-grad-missing
# source: https://github.com/greebear/pytorch-learning/issues/1
# Linear-regression demo with hand-written w, b updates: w.grad and b.grad are never zeroed, so the loss does not keep decreasing "even with lr 1e-6".
import torch

torch.manual_seed(10)
lr = 0.05
x = torch.rand(20, 1) * 10
y = 2 * x + (5 + torch.randn(20, 1))

w = torch.randn((1), requires_grad=True)
b = torch.zeros((1), requires_grad=True)

for iteration in range(1000):
    wx = torch.mul(w, x)
    y_pred = torch.add(wx, b)
    loss = (0.5 * (y - y_pred) ** 2).mean()
    loss.backward()
    b.data.sub_(lr * b.grad)
    w.data.sub_(lr * w.grad)
    if iteration % 100 == 0:
        print(iteration, loss.data.numpy(), w.data.numpy(), b.data.numpy())
