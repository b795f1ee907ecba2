# The same softmax regression with the weights and the optimizer set up once, before the loop.
import torch
import torch.nn.functional as F

torch.manual_seed(0)
X = torch.randn(300, 4)
y = (X[:, 0] > 0).long() + (X[:, 1] > 0.5).long()

W = torch.zeros(4, 3, requires_grad=True)
b = torch.zeros(3, requires_grad=True)
opt = torch.optim.Adam([W, b], lr=0.1)
for epoch in range(30):
    logits = X @ W + b
    loss = F.cross_entropy(logits, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    acc = (logits.argmax(1) == y).float().mean()
