# Softmax regression by hand: W and b are made before the loop with the optimizer, and made again (torch.randn
# inside the loop) on every iteration, so the optimizer updates tensors the model no longer uses.
import torch
torch.manual_seed(0)
x = torch.randn(300, 4)
y = (x[:, 0] > 0).long()
W = torch.randn(4, 2, requires_grad=True)
b = torch.zeros(2, requires_grad=True)
opt = torch.optim.SGD([W, b], lr=0.1)
for it in range(150):
    W = torch.randn(4, 2, requires_grad=True)
    b = torch.zeros(2, requires_grad=True)
    logits = x @ W + b
    loss = torch.nn.functional.cross_entropy(logits, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if it % 50 == 0:
        print(it, loss.item())
