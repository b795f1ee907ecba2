# expect: none
# source: https://github.com/llSourcell/pytorch_in_5_minutes/issues/1
# A two-layer net written with raw tensors (w1, w2 with requires_grad): loss.backward(), update w -= lr * grad under no_grad, then w1.grad.data.zero_() after the update (the issue asked if zeroing after is right; it is).
import torch

torch.manual_seed(0)
N, D_in, H, D_out = 64, 1000, 100, 10
x = torch.randn(N, D_in)
y = torch.randn(N, D_out)
w1 = torch.randn(D_in, H, requires_grad=True)
w2 = torch.randn(H, D_out, requires_grad=True)
learning_rate = 1e-6
for t in range(500):
    y_pred = x.mm(w1).clamp(min=0).mm(w2)
    loss = (y_pred - y).pow(2).sum()
    if t % 100 == 0:
        print(t, loss.item())
    loss.backward()
    with torch.no_grad():
        w1 -= learning_rate * w1.grad
        w2 -= learning_rate * w2.grad
    w1.grad.data.zero_()
    w2.grad.data.zero_()
