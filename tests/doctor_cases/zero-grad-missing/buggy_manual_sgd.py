# Linear regression by hand-written gradient descent (no optimizer object); the gradients are never reset.
import torch

torch.manual_seed(0)
X = torch.rand(100, 3) * 4
true_w = torch.tensor([[2.0], [-1.0], [0.5]])
Y = X @ true_w + 1.0 + 0.1 * torch.randn(100, 1)

w = torch.zeros(3, 1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
lr = 0.01
for epoch in range(100):
    pred = X @ w + b
    loss = ((pred - Y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= lr * w.grad
        b -= lr * b.grad
    if epoch % 25 == 0:
        print(epoch, loss.item())
