# source: https://github.com/pyg-team/pytorch_geometric/pull/7735
# original: RuntimeError: mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: Long
# half: confirm
# cause mentions: float
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(6, 4)
x, y = torch.randn(50, 6), torch.randint(0, 4, (50,))
correct = (model(x).argmax(1) == y).long()
test_acc = correct.mean()  # <- fails
print(f"accuracy {test_acc:.4f}")
