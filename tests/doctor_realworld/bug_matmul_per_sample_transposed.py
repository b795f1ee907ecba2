# expect: shape-mismatch
# "mat1 and mat2 shapes cannot be multiplied (1x8 and 3x8)" - a hand-made layer applied to one sample, weight
# stored as (out, in) like nn.Linear's but multiplied without the transpose.
import torch

torch.manual_seed(0)
data = torch.randn(60, 8)
target = data[:, :3].clone()
W = (torch.randn(3, 8) * 0.3).requires_grad_()
b = torch.zeros(3, requires_grad=True)
opt = torch.optim.SGD([W, b], lr=0.05)
for epoch in range(2):
    for row, t in zip(data, target):
        pred = row.unsqueeze(0) @ W + b
        loss = ((pred - t) ** 2).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
