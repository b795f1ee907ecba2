# source: https://github.com/Fafa-DL/Awesome-Backbones/issues/5
# original: RuntimeError: selected index k out of range
# half: tune
# cause mentions: classes|size
import torch
from torch import nn


def accuracy(output: torch.Tensor, target: torch.Tensor, topk: tuple[int, ...] = (1, 5)) -> list[float]:
    maxk = max(topk)
    _, pred = output.topk(maxk, 1, True, True)  # <- fails
    correct = pred.t().eq(target.view(1, -1))
    return [correct[:k].float().sum().item() / len(target) for k in topk]


torch.manual_seed(0)
model = nn.Linear(12, 3)  # three classes
x, y = torch.randn(10, 12), torch.randint(0, 3, (10,))
print(accuracy(model(x), y))
