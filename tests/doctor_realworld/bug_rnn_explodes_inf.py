# expect: exploding-gradients
# Character-level RNN on long sequences, plain SGD with a big step and no clipping: inf after a few updates.
import torch
from torch import nn

torch.manual_seed(0)
seq = torch.randn(32, 200, 10) * 3
target = seq.sum(dim=(1, 2)).unsqueeze(1)

rnn = nn.RNN(10, 64, batch_first=True, nonlinearity="relu")
head = nn.Linear(64, 1)
opt = torch.optim.SGD(list(rnn.parameters()) + list(head.parameters()), lr=0.5)
for step in range(10):
    opt.zero_grad()
    out, _ = rnn(seq)
    loss = nn.functional.mse_loss(head(out[:, -1]), target)
    loss.backward()
    opt.step()
