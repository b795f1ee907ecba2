# The same per-sample loop, reading the prediction with argmax(dim=-1), the last dimension.
import torch
import torch.nn.functional as F

torch.manual_seed(0)
xs = torch.randn(40, 5)
ys = (xs.sum(1) > 0).long()
weights = [torch.nn.Parameter(torch.randn(5, 16) * 0.3), torch.nn.Parameter(torch.randn(16, 2) * 0.3)]
opt = torch.optim.SGD(weights, lr=0.1)


def net(x, ws):
    return torch.tanh(x @ ws[0]) @ ws[1]


correct = 0
for x, y in zip(xs, ys):
    logits = net(x, weights)
    loss = F.cross_entropy(logits, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    correct += int(logits.argmax(dim=-1) == y)
