# expect: none
# Linear regression from scratch: weights created once, updated under no_grad, gradients zeroed.
import torch

torch.manual_seed(0)
X = torch.randn(128, 3)
y = X @ torch.tensor([[1.5], [-2.0], [0.7]]) + 0.2
w = torch.randn(3, 1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
for epoch in range(100):
    loss = ((X @ w + b - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
        b -= 0.1 * b.grad
        w.grad.zero_()
        b.grad.zero_()
print(loss.item())
