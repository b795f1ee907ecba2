# expect: none
# source: https://devpeace.com/python/48001598/why-do-we-need-to-call-zero-grad-in-pytorch
# The accepted answer's example to "why do we need zero_grad": W (4, 3) and b (3) trained sample by sample with Adam, gradients cleared before each backward.
import torch
import torch.optim as optim

torch.manual_seed(0)


def linear_model(x, W, b):
    return torch.matmul(x, W) + b


true_W = torch.randn(4, 3)
data = torch.randn(200, 4)
targets = data @ true_W + 0.5
W = torch.randn(4, 3, requires_grad=True)
b = torch.randn(3, requires_grad=True)
optimizer = optim.Adam([W, b], lr=0.01)

for epoch in range(3):
    for sample, target in zip(data, targets):
        optimizer.zero_grad()
        output = linear_model(sample, W, b)
        loss = ((output - target) ** 2).sum()
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
