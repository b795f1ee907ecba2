# expect: none
# source: https://github.com/pytorch/examples/blob/main/regression/main.py
# The official polynomial-regression example: a Linear(4, 1) on [x, x^2, x^3, x^4] features, batches of 32, smooth_l1_loss, hand-written SGD update (param.data.add_(-0.1 * grad)) until the loss is below 1e-3.
from itertools import count

import torch
import torch.nn.functional as F

torch.manual_seed(0)
POLY_DEGREE = 4
W_target = torch.randn(POLY_DEGREE, 1) * 5
b_target = torch.randn(1) * 5


def make_features(x):
    x = x.unsqueeze(1)
    return torch.cat([x ** i for i in range(1, POLY_DEGREE + 1)], 1)


def f(x):
    return x.mm(W_target) + b_target.item()


def get_batch(batch_size=32):
    random = torch.randn(batch_size)
    x = make_features(random)
    return x, f(x)


fc = torch.nn.Linear(W_target.size(0), 1)
for batch_idx in count(1):
    batch_x, batch_y = get_batch()
    fc.zero_grad()
    output = F.smooth_l1_loss(fc(batch_x), batch_y)
    loss = output.item()
    output.backward()
    for param in fc.parameters():
        param.data.add_(-0.1 * param.grad)
    if loss < 1e-3 or batch_idx >= 3000:
        break
print('Loss: {:.6f} after {} batches'.format(loss, batch_idx))
