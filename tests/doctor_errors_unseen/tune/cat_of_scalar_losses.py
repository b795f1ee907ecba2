# source: https://github.com/kuaikuaikim/dface/issues/27
# original: RuntimeError: zero-dimensional tensor (at position 0) cannot be concatenated
# half: tune
# cause mentions: stack
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(4, 3)
x, y = torch.randn(32, 4), torch.randint(0, 3, (32,))
accuracy_list = []
for i in range(0, 32, 8):
    pred = model(x[i:i + 8]).argmax(1)
    accuracy_list.append((pred == y[i:i + 8]).float().mean())
accuracy_avg = torch.mean(torch.cat(accuracy_list))  # <- fails
print(accuracy_avg)
