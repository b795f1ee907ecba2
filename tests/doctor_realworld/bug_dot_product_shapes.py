# expect: shape-mismatch
# "RuntimeError: inconsistent tensor size" - linear regression written with torch.dot, bias folded in wrongly.
import torch

torch.manual_seed(0)
X = torch.randn(100, 3)
true_w = torch.tensor([2.0, -1.0, 0.5])
y = X @ true_w + 0.3

w = torch.zeros(4, requires_grad=True)  # three weights and a bias
lr = 0.05
for epoch in range(20):
    total = 0.0
    for i in range(len(X)):
        pred = torch.dot(X[i], w)
        loss = (pred - y[i]) ** 2
        loss.backward()
        with torch.no_grad():
            w -= lr * w.grad
            w.grad.zero_()
        total += loss.item()
